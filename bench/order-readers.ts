// Readers of `GET /v2/orders/{id}` on their own thread, so what they time is the service's answer and
// not the bench process's own work (a thousand clients signing and parsing their event streams).
// The parent posts order ids as they are created and `'stop'` at the end; the worker answers with the
// latency of every read in ms.
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

interface ReaderOptions {
  apiUrl: string;
  appKey: string;
  readers: number;
}

export class OrderReaders {
  private readonly worker: Worker;

  constructor(options: ReaderOptions) {
    // On Node 20 the parent's `--import tsx` does not reach a worker's entry: the worker registers it.
    this.worker = new Worker(`import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(import.meta.url)}); })`, {
      eval: true,
      workerData: options,
    });
  }

  add(orderId: string): void {
    this.worker.postMessage(orderId);
  }

  /** Stops reading; the latency of each read, in ms. */
  async stop(): Promise<number[]> {
    const reads = new Promise<number[]>((resolve, reject) => {
      this.worker.once('message', resolve);
      this.worker.once('error', reject);
    });
    this.worker.postMessage('stop');
    const result = await reads;
    await this.worker.terminate();
    return result;
  }
}

async function readUntilStopped({ apiUrl, appKey, readers }: ReaderOptions): Promise<void> {
  const ids: string[] = [];
  const reads: number[] = [];
  let running = true;
  let failure: Error | undefined;
  parentPort!.on('message', (message: string) => {
    if (message === 'stop') running = false;
    else ids.push(message);
  });
  const reader = async () => {
    while (running) {
      const id = ids[Math.floor(Math.random() * ids.length)];
      if (!id) {
        await new Promise((r) => setTimeout(r, 50));
        continue;
      }
      const t0 = performance.now();
      const res = await fetch(`${apiUrl}/v2/orders/${id}`, { headers: { 'service-app-id': appKey } });
      await res.arrayBuffer();
      if (res.status !== 200) failure ??= new Error(`GET /v2/orders/${id}: ${res.status}`);
      reads.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: readers }, reader));
  if (failure) throw failure;
  parentPort!.postMessage(reads);
}

if (!isMainThread && parentPort) await readUntilStopped(workerData as ReaderOptions);
