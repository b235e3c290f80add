import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { chainAdapter } from '../../chains/adapters.ts';
import { AppError, conflict, invalid, notFound, shown } from '../../errors.ts';
import { toRfc3339Micro } from '../../store/database.ts';
import { addressHolder, registeredSolver, setSolverAddress, solverAddressMessage, type RegisteredSolver } from '../../store/solver-registry.ts';
import type { ApiContext } from '../context.ts';
import { errorResponses, Ok } from '../schemas.ts';
import { SOLVER_KEY_HEADER, solverAuth } from '../solver-auth.ts';

const SolverView = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    addresses: Type.Array(
      Type.Object({
        chain: Type.String(),
        address: Type.String(),
        proven_at: Type.String({ description: 'RFC 3339 UTC with microseconds' }),
      }),
    ),
    pairs: Type.Array(Type.Object({ source_asset: Type.String(), destination_asset: Type.String() }), {
      description: 'The pairs it answers quote requests for (PUT /solver/v1/pairs)',
    }),
  },
  { $id: 'RegisteredSolver' },
);

const AddressBody = Type.Object(
  {
    address: Type.String({ minLength: 1, maxLength: 200, description: "The solver's address on the chain" }),
    signature: Type.String({
      minLength: 1,
      maxLength: 300,
      description: 'The address\'s signature of "Hashlock solver <id> controls <address> on <chain>", as its wallets sign text (EVM: EIP-191 hex; Solana: ed25519, base58)',
    }),
  },
  { additionalProperties: false },
);

export const solverView = (s: RegisteredSolver) => ({
  id: s.id,
  name: s.name,
  addresses: s.addresses.map((a) => ({ chain: a.chain, address: a.address, proven_at: toRfc3339Micro(a.provenAt) })),
  pairs: s.pairs.map(([from, to]) => ({ source_asset: from, destination_asset: to })),
});

/** The API of registered solvers (docs/api.md, "Solver API"), keyed by a solver key, not an app key. */
export function solverApiRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const { db, registry } = ctx;
  app.addSchema(SolverView);
  const onRequest = solverAuth(db);
  const tags = ['solvers'];

  app.get(
    '/solver/v1/me',
    {
      onRequest,
      schema: {
        summary: 'The calling solver and its proven addresses',
        description: `Registered solvers only: send the key \`hashlock solvers register\` printed in the \`${SOLVER_KEY_HEADER}\` header.`,
        tags,
        response: { 200: Ok(Type.Ref('RegisteredSolver')), ...errorResponses(401) },
      },
    },
    async (request) => ({ status: 'Ok', result: solverView(request.solver!) }),
  );

  app.put<{ Params: { chain: string }; Body: { address: string; signature: string } }>(
    '/solver/v1/addresses/:chain',
    {
      onRequest,
      schema: {
        summary: "Prove and register the solver's address on a chain",
        description:
          'The address signs `Hashlock solver <id> controls <address> on <chain>` (the address as sent); it replaces the ' +
          "solver's address on that chain. An address another solver holds there is refused (409).",
        tags,
        params: Type.Object({ chain: Type.String({ maxLength: 100 }) }),
        body: AddressBody,
        response: { 200: Ok(Type.Ref('RegisteredSolver')), ...errorResponses(400, 401, 404, 409) },
      },
    },
    async (request) => {
      const solver = request.solver!;
      const chain = registry.chain(request.params.chain);
      if (!chain?.isActive) throw notFound(`no active chain ${shown(request.params.chain)}`);
      const adapter = chainAdapter(chain);
      if (!adapter?.verifyAddressProof) throw new AppError('not_supported', `solver addresses on ${chain.key} (${chain.family}) cannot be proven yet`);
      const { signature } = request.body;
      const address = adapter.normalizeParty(chain, request.body.address);
      if (!address) throw invalid(`address: not ${adapter.partyDescription}`);
      const message = solverAddressMessage(solver.id, chain.key, request.body.address);
      if (!(await adapter.verifyAddressProof(address, message, signature))) {
        throw new AppError('invalid_signature', `signature: not ${shown(request.body.address)}'s signature of "${message}"`);
      }
      const holder = await addressHolder(db, chain.key, address);
      if (holder !== undefined && holder !== solver.id) throw conflict(`address: another solver holds ${address} on ${chain.key}`);
      await setSolverAddress(db, { solverId: solver.id, chain: chain.key, address, proof: signature });
      return { status: 'Ok', result: solverView((await registeredSolver(db, solver.id))!) };
    },
  );
}
