/**
 * JSON with u64 values: Solana's RPC puts lamports, slots and token amounts in JSON numbers, which may
 * exceed 2^53. Requests are parsed with integers beyond that range as bigint, and bigints in a
 * response are written as plain JSON numbers (kit reads them back as bigint).
 */
const BIGINT_MARK = '\u0000bigint:';

/** JSON.parse, except integers that a double cannot hold exactly become bigint. */
export function parseJsonWithBigInts(text: string): unknown {
  if (!/\d{16,}/.test(text)) return JSON.parse(text);
  let out = '';
  let inString = false;
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (inString) {
      out += ch;
      if (ch === '\\') {
        out += text[i + 1] ?? '';
        i += 2;
        continue;
      }
      if (ch === '"') inString = false;
      i++;
      continue;
    }
    if (ch === '"') {
      inString = true;
      out += ch;
      i++;
      continue;
    }
    if (ch === '-' || (ch >= '0' && ch <= '9')) {
      const match = /^-?\d+(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 64));
      const token = match ? match[0] : ch;
      const integer = match !== null && match[1] === undefined && match[2] === undefined;
      out += integer && !Number.isSafeInteger(Number(token)) ? JSON.stringify(BIGINT_MARK + token) : token;
      i += token.length;
      continue;
    }
    out += ch;
    i++;
  }
  return JSON.parse(out, (_key, value: unknown) =>
    typeof value === 'string' && value.startsWith(BIGINT_MARK) ? BigInt(value.slice(BIGINT_MARK.length)) : value,
  );
}

/** JSON.stringify that writes bigints as JSON numbers. */
export function stringifyJsonWithBigInts(value: unknown): string {
  const marked = JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? BIGINT_MARK + v.toString() : v));
  return marked.replace(/"\\u0000bigint:(-?\d+)"/g, '$1');
}
