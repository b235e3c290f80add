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


/** One leg of an order as the API answers it: the blocks its initiate and redeem landed in. */
export interface DevSwap {
  initiate_block_number: string;
  redeem_block_number: string;
}

/** An order as the API answers it, as far as the settlement benches read it. */
export interface DevOrder {
  status: string;
  source_swap: DevSwap;
  destination_swap: DevSwap;
}
