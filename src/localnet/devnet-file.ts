import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** `<data dir>/devnet.json`: what a local client needs to talk to the dev service. */
export interface DevnetFile {
  api_url?: string;
  app_key?: string;
  [section: string]: unknown;
}

export const devnetPath = (dataDir: string): string => join(dataDir, 'devnet.json');

export function readDevnetFile(dataDir: string): DevnetFile {
  const path = devnetPath(dataDir);
  if (!existsSync(path)) return {};
  return JSON.parse(readFileSync(path, 'utf8')) as DevnetFile;
}

/** Merges `update` into the file, written atomically (other sections stay). */
export function updateDevnetFile(dataDir: string, update: DevnetFile): DevnetFile {
  mkdirSync(dataDir, { recursive: true });
  const next = { ...readDevnetFile(dataDir), ...update };
  const path = devnetPath(dataDir);
  writeFileSync(`${path}.tmp`, `${JSON.stringify(next, null, 2)}\n`, { mode: 0o600 });
  renameSync(`${path}.tmp`, path);
  return next;
}
