// `hashlock keys`: encrypted key files (src/keys/key-file.ts) that the service config names under
// key_files. Keys never pass through the command line: `import` reads the key from stdin, and the
// password comes from the environment or a file.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ed25519 } from '@noble/curves/ed25519.js';
import { InvalidArgumentError, Option, type Command } from 'commander';
import {
  curveOfKind,
  DEFAULT_SCRYPT_N,
  generateKey,
  KEY_CURVES,
  KEY_ROLES,
  KeyFileError,
  keyProblem,
  readKeyFileInfo,
  writeKeyFile,
  type KeyCurve,
  type KeyFileInfo,
  type KeyKind,
  type KeyRole,
} from '../keys/key-file.ts';
import { PASSWORD_FILE_VARIABLE, PASSWORD_VARIABLE, requireKeyPassword } from '../keys/password.ts';
import { plaintextKeyVariables, type ServiceConfig } from '../config/service-config.ts';
import { ConfigError } from '../config/schema-check.ts';
import { configOf } from './database.ts';

interface WriteOptions {
  role: KeyRole;
  curve?: KeyCurve;
  out: string;
  passwordFile?: string;
  scryptN?: number;
}

const scryptN = (value: string): number => {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 2 || n > 2 ** 20 || (n & (n - 1)) !== 0) throw new InvalidArgumentError('a power of two from 2 to 1048576');
  return n;
};

/** The options `new` and `import` share. */
function writeOptions(command: Command): Command {
  return command
    .addOption(new Option('--role <role>', 'whose key it is').choices(KEY_ROLES).makeOptionMandatory())
    .addOption(
      new Option('--curve <curve>', 'secp256k1 (EVM, Tron and Bitcoin-family chains; the default) or ed25519 (a Solana seed); the secret role has none').choices(KEY_CURVES),
    )
    .requiredOption('--out <file>', 'the key file to write (an existing file is never overwritten)')
    .option('--password-file <file>', `the file holding the password (else ${PASSWORD_FILE_VARIABLE}, else ${PASSWORD_VARIABLE})`)
    .addOption(new Option('--scrypt-n <n>', "scrypt's n (tests only: lower is weaker)").argParser(scryptN).hideHelp());
}

const passwordOf = (opts: WriteOptions): string => requireKeyPassword(process.env, 'hashlock keys', opts.passwordFile ?? null);

/** Encrypts `key` to `opts.out` and prints what was written: role, curve, address, file; never the key. */
function write(key: Uint8Array, kind: KeyKind, password: string, opts: WriteOptions): void {
  if (opts.scryptN !== undefined && opts.scryptN < DEFAULT_SCRYPT_N) {
    console.error(`warning: scrypt n ${opts.scryptN} is below the standard ${DEFAULT_SCRYPT_N}: a key file for tests only`);
  }
  try {
    const info = writeKeyFile(resolve(opts.out), key, password, kind, opts.scryptN !== undefined ? { scryptN: opts.scryptN } : {});
    console.log(`${describe(info)} written to ${info.file}`);
  } catch (err) {
    if (!(err instanceof KeyFileError)) throw err;
    console.error(`error: ${err.message}`);
    process.exitCode = 1;
  }
}

const describe = (info: KeyFileInfo): string => `${info.role ?? 'unlabelled'} key${info.curve ? ` (${info.curve}) ${info.address ?? ''}` : ''}`.trimEnd();

/** The kind the options ask for, or a usage error (a curve for the secret key). */
function kindOf(opts: WriteOptions): KeyKind | undefined {
  const kind: KeyKind = { role: opts.role, ...(opts.curve ? { curve: opts.curve } : {}) };
  if (opts.role === 'secret' && opts.curve) {
    console.error('error: --curve: the secret role is a symmetric key, with no curve');
    process.exitCode = 1;
    return undefined;
  }
  return kind;
}

/** One warning per plaintext key from the environment that `hashlock serve` uses. */
export function warnOfPlaintextKeys(config: ServiceConfig): void {
  for (const variable of plaintextKeyVariables(config)) {
    console.error(`warning: ${variable} is a plaintext key in the environment: use key_files (hashlock keys import)`);
  }
}

export function registerKeysCommand(program: Command): void {
  const keys = program
    .command('keys')
    .description(
      `encrypted key files (Web3 Secret Storage version 3, as geth and ethers write them), which the service config names under key_files; ` +
        `the password comes from ${PASSWORD_VARIABLE} or the file ${PASSWORD_FILE_VARIABLE} names (or --password-file), never the command line`,
    );

  writeOptions(keys.command('new').description('create a key file holding a fresh random key, and print its address')).action((opts: WriteOptions) => {
    const kind = kindOf(opts);
    if (kind) write(generateKey(kind), kind, passwordOf(opts), opts);
  });

  writeOptions(
    keys
      .command('import')
      .description(
        'encrypt a key read from stdin (32 bytes in hex, 0x optional; for ed25519 also a Solana keypair file\'s JSON array) into a key file; on a terminal it is read without echo',
      ),
  ).action(async (opts: WriteOptions) => {
    const kind = kindOf(opts);
    if (!kind) return;
    // Before the key is read: a missing password fails without asking for the key.
    const password = passwordOf(opts);
    const parsed = parseKeyInput(await readStdin('private key: '), curveOfKind(kind));
    if (typeof parsed === 'string') {
      console.error(`error: stdin: ${parsed}`);
      process.exitCode = 1;
      return;
    }
    write(parsed, kind, password, opts);
  });

  registerKeyAddressesCommand(keys);

  keys
    .command('list')
    .description("each key file's role, curve and address (read without the password; never the key); a directory lists its key files")
    .argument('[paths...]', 'key files or directories (default: the current directory)')
    .action((paths: string[]) => {
      const rows: KeyFileInfo[] = [];
      const report = (err: unknown) => {
        if (!(err instanceof KeyFileError)) throw err;
        console.error(err.message);
        process.exitCode = 1;
      };
      for (const path of paths.length > 0 ? paths : ['.']) {
        let directory = false;
        try {
          directory = statSync(path).isDirectory();
        } catch {
          // Reported as the file it was named as.
        }
        let files = [path];
        if (directory) {
          try {
            files = readdirSync(path)
              .filter((name) => name.endsWith('.json'))
              .sort()
              .map((name) => join(path, name))
              .filter(looksLikeKeystore);
          } catch (err) {
            report(new KeyFileError(path, `cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`));
            continue;
          }
        }
        for (const file of files) {
          try {
            rows.push({ ...readKeyFileInfo(file), file });
          } catch (err) {
            report(err);
          }
        }
      }
      if (rows.length === 0) return;
      const table = [['ROLE', 'CURVE', 'ADDRESS', 'FILE'], ...rows.map((r) => [r.role ?? '-', r.curve ?? '-', r.address ?? '-', r.file])];
      const widths = [0, 1, 2].map((i) => Math.max(...table.map((row) => row[i]!.length)));
      for (const row of table) console.log(row.map((cell, i) => (i < 3 ? cell.padEnd(widths[i]!) : cell)).join('  '));
    });
}

/**
 * `hashlock keys addresses`: what a role's key is on each chain of the config's registry, for the
 * config's `solvers[].addresses` and for funding (a Bitcoin-family key's coins go to its wallet address).
 */
function registerKeyAddressesCommand(keys: Command): void {
  keys
    .command('addresses')
    .description("the relayer's or solver's key on each chain of the config's registry: its party in HTLCs (solvers[].addresses) and where to fund it")
    .requiredOption('-c, --config <file>', 'service config file (its key_files or HASHLOCK_*_KEY, and registry)')
    .addOption(new Option('--role <role>', 'whose key').choices(['relayer', 'solver']).makeOptionMandatory())
    .action(async (opts: { config: string; role: 'relayer' | 'solver' }) => {
      const config = configOf(opts.config);
      const key = config.keys[opts.role];
      if (!key) throw new ConfigError(`--role: the config names no ${opts.role} key (key_files.${opts.role}, or HASHLOCK_${opts.role.toUpperCase()}_KEY)`);
      const { loadRegistry } = await import('../chains/registry.ts');
      const { chainAdapter } = await import('../chains/adapters.ts');
      const rows = loadRegistry(config.registryPath, { undeployed: true }).chains.flatMap((chain) => {
        const adapter = chainAdapter(chain);
        const party = adapter?.partyOfKey?.(chain, key);
        return party ? [[chain.key, party, adapter?.walletOfKey?.(chain, key) ?? party]] : [];
      });
      const table = [['CHAIN', 'PARTY', 'FUND'], ...rows];
      const widths = [0, 1].map((i) => Math.max(...table.map((row) => row[i]!.length)));
      for (const row of table) console.log(row.map((cell, i) => (i < 2 ? cell.padEnd(widths[i]!) : cell)).join('  '));
    });
}

/** In a directory, the JSON files that are keystores at all (a config or registry beside them is not listed). */
function looksLikeKeystore(file: string): boolean {
  try {
    const json = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    return typeof json === 'object' && json !== null && ('crypto' in json || 'Crypto' in json);
  } catch {
    return false;
  }
}

/**
 * The key in what was read: 32 bytes of hex (0x optional), or for ed25519 a Solana keypair file's JSON
 * array (the seed, then its public key); else why not, without quoting the input.
 */
export function parseKeyInput(text: string, curve: KeyCurve | undefined): Uint8Array | string {
  const input = text.trim();
  let key: Uint8Array;
  if (input.startsWith('[')) {
    if (curve !== 'ed25519') return "a JSON array is a Solana keypair: import it with --curve ed25519";
    let array: unknown;
    try {
      array = JSON.parse(input);
    } catch {
      return 'not a valid JSON array';
    }
    if (!Array.isArray(array) || array.length !== 64 || !array.every((b) => Number.isInteger(b) && b >= 0 && b <= 255)) return 'a Solana keypair is a JSON array of 64 bytes';
    const pair = Uint8Array.from(array as number[]);
    key = pair.slice(0, 32);
    if (!Buffer.from(ed25519.getPublicKey(key)).equals(Buffer.from(pair.subarray(32)))) return "the keypair's public key is not its seed's";
  } else {
    const hex = input.replace(/^0x/i, '');
    if (!/^[0-9a-fA-F]{64}$/.test(hex)) return 'expected a 32-byte key in hex (64 hex characters, 0x optional)';
    key = Uint8Array.from(Buffer.from(hex, 'hex'));
  }
  const problem = keyProblem(key, curve);
  return problem ? `the key ${problem}` : key;
}

/** Everything on stdin; on a terminal, one line typed without echo after `prompt`. */
async function readStdin(prompt: string): Promise<string> {
  const stdin = process.stdin;
  if (!stdin.isTTY) {
    const chunks: Buffer[] = [];
    for await (const chunk of stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }
  process.stderr.write(prompt);
  stdin.setRawMode(true);
  stdin.setEncoding('utf8');
  stdin.resume();
  return new Promise((done) => {
    let line = '';
    const finish = () => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write('\n');
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n' || ch === '\u0004') {
          finish();
          done(line);
          return;
        }
        if (ch === '\u0003') {
          finish();
          process.exit(130);
        }
        line = ch === '\u007f' || ch === '\b' ? line.slice(0, -1) : line + ch;
      }
    };
    stdin.on('data', onData);
  });
}
