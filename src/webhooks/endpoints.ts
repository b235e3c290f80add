import { conflict, invalid, shown } from '../errors.ts';
import type { SecretBox } from '../orders/secret-box.ts';
import { ORDER_STATUSES } from '../orders/status.ts';
import type { Db } from '../store/database.ts';
import { insertEndpoint, type WebhookEndpoint } from '../store/webhooks.ts';
import { privateHostProblem } from './addresses.ts';
import { generateWebhookSecret } from './signature.ts';

export const MAX_ENDPOINTS_PER_APP = 10;
export const MAX_URL_LENGTH = 2048;

/** What is wrong with a webhook URL, or undefined: absolute http(s), a host, no credentials, not too long. */
export function webhookUrlProblem(url: string): string | undefined {
  if (url.length > MAX_URL_LENGTH) return `must be at most ${MAX_URL_LENGTH} characters`;
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x20\x7f]/.test(url)) return 'must not contain spaces or control characters';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `must be an absolute http:// or https:// URL, not '${shown(url)}'`;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return `must be an http:// or https:// URL, not ${parsed.protocol}`;
  if (parsed.hostname === '') return 'must name a host';
  if (parsed.username !== '' || parsed.password !== '') return 'must not carry credentials (user:password@)';
  return undefined;
}

/** What is wrong with a status list, or undefined: known order statuses, each once. */
export function webhookStatusesProblem(statuses: readonly string[]): string | undefined {
  const known: readonly string[] = ORDER_STATUSES;
  const unknown = statuses.find((s) => !known.includes(s));
  if (unknown !== undefined) return `unknown status '${shown(unknown)}'; known: ${ORDER_STATUSES.join(', ')}`;
  if (new Set(statuses).size !== statuses.length) return 'lists a status twice';
  return undefined;
}

/**
 * Registers an app's endpoint with a new signing secret (kept encrypted; returned only here).
 * `fields` names the inputs in errors as the caller knows them (a body field, a CLI option).
 */
export async function registerEndpoint(
  db: Db,
  secrets: SecretBox,
  input: { appId: string; url: string; statuses: readonly string[]; allowPrivateAddresses: boolean },
  fields: { url: string; statuses: string } = { url: 'url', statuses: 'statuses' },
): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
  const urlProblem =
    webhookUrlProblem(input.url) ?? (input.allowPrivateAddresses ? undefined : privateHostProblem(new URL(input.url)));
  if (urlProblem) throw invalid(`${fields.url}: ${urlProblem}`);
  const statusProblem = webhookStatusesProblem(input.statuses);
  if (statusProblem) throw invalid(`${fields.statuses}: ${statusProblem}`);
  const secret = generateWebhookSecret();
  const endpoint = await insertEndpoint(db, {
    appId: input.appId,
    url: input.url,
    statuses: input.statuses,
    secretCiphertext: secrets.seal(Buffer.from(secret, 'utf8')),
    maxPerApp: MAX_ENDPOINTS_PER_APP,
  });
  if (!endpoint) throw conflict(`an app may have at most ${MAX_ENDPOINTS_PER_APP} webhook endpoints; remove one first`);
  return { endpoint, secret };
}
