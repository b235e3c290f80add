// Every error code is documented in docs/api.md's table with the HTTP status the API answers it with.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { HTTP_STATUS } from '../../src/api/errors.ts';
import { ERROR_CODES } from '../../src/errors.ts';

test("docs/api.md's error table lists every code with its HTTP status, once each", () => {
  const doc = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
  const table = doc.slice(doc.indexOf('| code | HTTP | when |'));
  const rows = [...table.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)].map((m) => [m[1]!, Number(m[2])] as const);
  assert.deepEqual(
    rows.map(([code]) => code),
    [...ERROR_CODES],
    'the table lists the codes of src/errors.ts, in their order',
  );
  for (const [code, status] of rows) assert.equal(status, HTTP_STATUS[code as keyof typeof HTTP_STATUS], `${code}: the documented status`);
});
