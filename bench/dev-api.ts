import type { Dev } from '../src/localnet/dev.ts';

/** A client of the dev service's API with its app key: the `result` of an answer, or an error naming the path. */
export function devApi(dev: Pick<Dev, 'apiUrl' | 'appKey'>) {
  return async (path: string, init?: { method: string; body: object }): Promise<any> => {
    const res = await fetch(`${dev.apiUrl}${path}`, {
      method: init?.method ?? 'GET',
      headers: { 'service-app-id': dev.appKey, 'content-type': 'application/json' },
      ...(init ? { body: JSON.stringify(init.body) } : {}),
    });
    const body = (await res.json()) as { result?: any; error?: string };
    if (!res.ok || body.result === undefined) throw new Error(`${path}: ${res.status} ${body.error}`);
    return body.result;
  };
}

