import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { PACKAGE_ROOT } from './config/service-config.ts';

export const VERSION = (JSON.parse(readFileSync(resolve(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
