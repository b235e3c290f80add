// Whether dist/ (from scripts/build.mjs) holds the service compiled from the sources as they are now:
// its stamp is written last by a build that succeeded, and no file under src/ changed after it.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, URL } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const DIST = join(ROOT, 'dist');
export const STAMP = join(DIST, '.built');

/** The latest modification time of any file under `dir`. */
function newest(dir) {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const time = entry.isDirectory() ? newest(path) : statSync(path).mtimeMs;
    if (time > latest) latest = time;
  }
  return latest;
}

export function compiledIsCurrent(root = ROOT) {
  try {
    return statSync(join(root, 'dist', '.built')).mtimeMs >= newest(join(root, 'src'));
  } catch {
    return false;
  }
}
