// A process that holds a lease until it is killed: `node --import tsx lease-holder.ts <database url> <lease>`.
// It prints "tick" for every tick it runs, so a test knows when it holds the lease.
import { leasedLoop } from '../../src/lease-loop.ts';
import { openStore } from '../../src/store/database.ts';

const [url, lease] = process.argv.slice(2);
const store = await openStore({ databaseUrl: url! });
leasedLoop({ db: store.db, lease: lease!, holder: `pid-${process.pid}`, intervalMs: 200, tick: async () => void process.stdout.write('tick\n'), onError: (e) => console.error(e) });
