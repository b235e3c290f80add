// The key files' password: from the environment or a file, never from the command line (where `ps` and
// shell histories show it).
import { readFileSync } from 'node:fs';
import { ConfigError } from '../config/schema-check.ts';

export const PASSWORD_VARIABLE = 'HASHLOCK_KEY_PASSWORD';
export const PASSWORD_FILE_VARIABLE = 'HASHLOCK_KEY_PASSWORD_FILE';

/**
 * The password from `passwordFile` (a command's --password-file), else the file HASHLOCK_KEY_PASSWORD_FILE
 * names, else HASHLOCK_KEY_PASSWORD; undefined when none is set. A file's one trailing line break is not
 * part of the password.
 */
export function keyPassword(env: NodeJS.ProcessEnv, passwordFile?: string): string | undefined {
  if (!passwordFile && env[PASSWORD_VARIABLE] && env[PASSWORD_FILE_VARIABLE]) {
    throw new ConfigError(`${PASSWORD_VARIABLE} and ${PASSWORD_FILE_VARIABLE} are both set: set one`);
  }
  const file = passwordFile || env[PASSWORD_FILE_VARIABLE];
  if (!file) return env[PASSWORD_VARIABLE] || undefined;
  const source = passwordFile ? '--password-file' : PASSWORD_FILE_VARIABLE;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`${source}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const password = text.replace(/\r?\n$/, '');
  if (password === '') throw new ConfigError(`${source}: ${file} is empty`);
  return password;
}

/**
 * The password, or a ConfigError saying where to put it (`what`: what needs it). `passwordFile`: the
 * command's --password-file, which the command has (`null` when not given) or not (undefined).
 */
export function requireKeyPassword(env: NodeJS.ProcessEnv, what: string, passwordFile?: string | null): string {
  const password = keyPassword(env, passwordFile ?? undefined);
  if (password === undefined) {
    const flag = passwordFile === null ? ' (or --password-file)' : '';
    throw new ConfigError(`${what}: set ${PASSWORD_VARIABLE} or ${PASSWORD_FILE_VARIABLE}${flag} to the key files' password, never on the command line`);
  }
  return password;
}
