/** The package root, dist/ in it, and the stamp a successful build writes last. */
export const ROOT: string;
export const DIST: string;
export const STAMP: string;
/** Whether dist/ was built after the last change of any file under `root`/src/ (default: this package). */
export function compiledIsCurrent(root?: string): boolean;
