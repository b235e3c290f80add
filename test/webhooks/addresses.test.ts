// Which webhook hosts count as private: loopback, private networks, link-local (cloud metadata),
// carrier-grade NAT, IPv6 unique-local and IPv4-mapped forms of all of these; and the connection
// lookup that refuses a name resolving to one.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isPublicAddress, privateHostProblem, publicOnlyLookup } from '../../src/webhooks/addresses.ts';

test('public and private addresses', () => {
  for (const ip of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '93.184.216.34']) assert.equal(isPublicAddress(ip), true, ip);
  for (const ip of [
    '127.0.0.1', '127.1.2.3', '10.0.0.5', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1',
    '0.0.0.0', '224.0.0.1', '255.255.255.255', '::1', '::', 'fc00::1', 'fd12:3456::1', 'fe80::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1', 'not an ip',
  ]) assert.equal(isPublicAddress(ip), false, ip);
});

test('hosts refused when private addresses are off', () => {
  const problem = (url: string) => privateHostProblem(new URL(url));
  assert.equal(problem('https://hooks.example.com/x'), undefined, 'names are checked when connecting');
  assert.equal(problem('https://8.8.8.8/x'), undefined);
  assert.match(problem('http://127.0.0.1:9/x')!, /127\.0\.0\.1 is not a public address/);
  assert.match(problem('http://[::1]/x')!, /::1 is not a public address/);
  assert.match(problem('http://169.254.169.254/latest/meta-data')!, /not a public address/);
  assert.match(problem('http://[::ffff:7f00:1]/x')!, /not a public address/);
  assert.match(problem('http://localhost:8080/x')!, /localhost is this machine/);
  assert.match(problem('http://api.localhost/x')!, /this machine/);
});

test('the connection lookup refuses a name that resolves to a private address', async () => {
  const looked = await new Promise<{ err: NodeJS.ErrnoException | null }>((resolve) =>
    publicOnlyLookup('localhost', {}, (err) => resolve({ err })),
  );
  assert.equal(looked.err?.code, 'EPRIVATEADDRESS');
  assert.match(String(looked.err?.message), /localhost resolves to (127\.0\.0\.1|::1), not a public address/);
});
