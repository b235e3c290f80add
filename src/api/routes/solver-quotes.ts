import type { ServerResponse } from 'node:http';
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { AppError, invalid, shown } from '../../errors.ts';
import { openEventStream } from '../../events/event-hub.ts';
import type { AnswerBody } from '../../pricing/quote-auction.ts';
import { findSolverByKey, setSolverPairs } from '../../store/solver-registry.ts';
import type { ApiContext } from '../context.ts';
import { errorResponses, Ok } from '../schemas.ts';
import { SOLVER_KEY_HEADER, solverAuth } from '../solver-auth.ts';
import { EVENT_STREAM_RESPONSE, RESUME_QUERY } from './events.ts';
import { solverView } from './solver-api.ts';

const Amount = Type.String({ pattern: '^[0-9]{1,78}$', errorMessage: 'must be a whole number of base units' });

const PairsBody = Type.Object(
  {
    pairs: Type.Array(
      Type.Object({ source_asset: Type.String({ maxLength: 200 }), destination_asset: Type.String({ maxLength: 200 }) }, { additionalProperties: false }),
      { maxItems: 1000 },
    ),
  },
  { additionalProperties: false },
);

const AnswerSchema = Type.Object(
  {
    source_amount: Amount,
    destination_amount: Amount,
    expires_at: Type.Integer({ minimum: 0, description: 'Unix seconds until which the solver fills at these amounts' }),
  },
  { additionalProperties: false },
);

const BatchAnswerSchema = Type.Object(
  {
    answers: Type.Array(
      Type.Object(
        {
          request_id: Type.String({ maxLength: 100 }),
          source_amount: Amount,
          destination_amount: Amount,
          expires_at: Type.Integer({ minimum: 0, description: 'Unix seconds until which the solver fills at these amounts' }),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 1000 },
    ),
  },
  { additionalProperties: false },
);

const BatchOutcome = Type.Object({
  request_id: Type.String(),
  accepted: Type.Boolean(),
  code: Type.Optional(Type.String({ description: 'Why it was refused: the code a single answer would get' })),
  error: Type.Optional(Type.String()),
});

/** How often an open quote-request stream re-reads its solver: a revoked key ends it, new pairs apply. */
const RECHECK_MS = 5_000;
const HEARTBEAT_MS = 15_000;
/** A solver that reads nothing of its stream is cut off past this much unread. */
const MAX_UNREAD_BYTES = 1024 * 1024;

/**
 * The quote side of the solver API (docs/api.md, "Quote requests"): the pairs a solver serves, its
 * stream of quote requests and its answers, and the stream of the orders matched to it.
 */
export function solverQuoteRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const { db, registry, auction, events } = ctx;
  const onRequest = solverAuth(db);
  const answerAuth = solverAuth(db, { cacheMs: RECHECK_MS, clock: ctx.clock });
  const tags = ['solvers'];
  const open = new Set<ServerResponse>();
  app.addHook('preClose', async () => {
    for (const res of open) res.end();
  });

  app.put<{ Body: { pairs: Array<{ source_asset: string; destination_asset: string }> } }>(
    '/solver/v1/pairs',
    {
      onRequest,
      schema: {
        summary: 'Register the pairs the solver answers quote requests for',
        description:
          'Replaces the list. Each asset must be active, and the solver must have proven its address on both chains ' +
          '(PUT /solver/v1/addresses/{chain}). With pairs the solver is active: its balances at its proven addresses ' +
          'are read for the liquidity, and while its quote-request stream is open it competes for quotes and orders.',
        tags,
        body: PairsBody,
        response: { 200: Ok(Type.Ref('RegisteredSolver')), ...errorResponses(400, 401) },
      },
    },
    async (request) => {
      const solver = request.solver!;
      const proven = new Set(solver.addresses.map((a) => a.chain));
      const pairs = new Map<string, [string, string]>();
      request.body.pairs.forEach((p, i) => {
        const asset = (field: 'source_asset' | 'destination_asset') => {
          const found = registry.asset(p[field]);
          if (!found?.isActive) throw invalid(`pairs[${i}].${field}: unknown or inactive asset ${shown(p[field])}`);
          if (!proven.has(found.chain.key)) {
            throw invalid(`pairs[${i}].${field}: prove your address on ${found.chain.key} first (PUT /solver/v1/addresses/${found.chain.key})`);
          }
          return found;
        };
        const from = asset('source_asset');
        const to = asset('destination_asset');
        if (from.id === to.id) throw invalid(`pairs[${i}].destination_asset: must differ from source_asset`);
        pairs.set(`${from.id}>${to.id}`, [from.id, to.id]);
      });
      await setSolverPairs(db, solver.id, [...pairs.values()]);
      auction.setPairs(solver.id, pairs.values());
      return { status: 'Ok', result: solverView({ ...solver, pairs: [...pairs.values()] }) };
    },
  );

  app.get(
    '/solver/v1/quote-requests',
    {
      onRequest,
      schema: {
        summary: 'Stream the quote requests for the pairs the solver serves',
        description:
          'Server-Sent Events. It opens with `event: ready` (`{"solver_id","pairs","deadline_ms"}`); then each ' +
          '`event: quote_request` is `{"id","purpose","source_asset","destination_asset","source_amount","destination_amount",' +
          '"affiliate_fee","answer_by"}` with exactly one amount set. Answer with POST /solver/v1/quote-requests/{id} ' +
          'before `answer_by`. `purpose` is `order` when the winning answer matches an order at once, `quote` when it ' +
          'prices a quote shown to a client. A comment line is sent every 15 s.',
        tags,
        produces: ['text/event-stream'],
        response: { 200: EVENT_STREAM_RESPONSE, ...errorResponses(401, 409) },
      },
    },
    async (request, reply) => {
      const solver = request.solver!;
      if (solver.pairs.length === 0) throw new AppError('conflict', 'no pairs registered: register the pairs you serve first (PUT /solver/v1/pairs)');
      const header = request.headers[SOLVER_KEY_HEADER];
      const key = (Array.isArray(header) ? header[0] : header) ?? '';
      const res = openEventStream(reply);
      const send = (frame: string) => {
        if (res.destroyed) return;
        res.write(frame);
        if (res.writableLength > MAX_UNREAD_BYTES) res.destroy();
      };
      send(`event: ready\ndata: ${JSON.stringify({ solver_id: solver.id, pairs: solver.pairs, deadline_ms: auction.deadlineMs })}\n\n`);
      const disconnect = auction.connect(solver.id, solver.pairs, send);
      open.add(res);
      const heartbeat = setInterval(() => send(': heartbeat\n\n'), HEARTBEAT_MS);
      const recheck = setInterval(() => {
        findSolverByKey(db, key).then(
          (now) => (now ? auction.setPairs(solver.id, now.pairs) : res.end()),
          () => undefined, // the database is away: keep the stream; the next check asks again
        );
      }, RECHECK_MS);
      res.on('close', () => {
        open.delete(res);
        disconnect();
        clearInterval(heartbeat);
        clearInterval(recheck);
      });
    },
  );

  app.post<{ Params: { id: string }; Body: AnswerBody }>(
    '/solver/v1/quote-requests/:id',
    {
      onRequest: answerAuth,
      schema: {
        summary: 'Answer a quote request with a firm price',
        description:
          'Both amounts, the requested one as sent; `destination_amount` is what the client receives, after the ' +
          "request's affiliate fee bips. The solver fills at these amounts until `expires_at`. Taken only until the " +
          "request's `answer_by` (409 `quote_closed` after it), once per request. The key is looked up at most every 5 s " +
          'here: a revoked key is refused within that time, as its stream ends.',
        tags,
        params: Type.Object({ id: Type.String({ maxLength: 100 }) }),
        body: AnswerSchema,
        response: { 200: Ok(Type.Object({ id: Type.String() })), ...errorResponses(400, 401, 404, 409) },
      },
    },
    async (request) => {
      auction.answer(request.solver!.id, request.params.id, request.body);
      return { status: 'Ok', result: { id: request.params.id } };
    },
  );

  app.post<{ Body: Static<typeof BatchAnswerSchema> }>(
    '/solver/v1/quote-answers',
    {
      onRequest: answerAuth,
      schema: {
        summary: 'Answer several quote requests at once',
        description:
          'Each answer as POST /solver/v1/quote-requests/{id} takes it, with its `request_id`. A solver sent many ' +
          'requests at once answers them in one call instead of one call each. Each answer is taken or refused on its ' +
          'own: the result lists, in order, `accepted`, or the `code` and `error` that answer alone would have got.',
        tags,
        body: BatchAnswerSchema,
        response: { 200: Ok(Type.Array(BatchOutcome)), ...errorResponses(400, 401) },
      },
    },
    async (request) => {
      const solverId = request.solver!.id;
      const result = request.body.answers.map(({ request_id: id, ...answer }) => {
        try {
          auction.answer(solverId, id, answer);
          return { request_id: id, accepted: true };
        } catch (err) {
          if (!(err instanceof AppError)) throw err;
          return { request_id: id, accepted: false, code: err.code, error: err.message };
        }
      });
      return { status: 'Ok', result };
    },
  );

  app.get<{ Querystring: { last_event_id?: string } }>(
    '/solver/v1/orders/events',
    {
      onRequest,
      schema: {
        summary: 'Stream the events of the orders matched to the solver',
        description:
          'Server-Sent Events, as GET /v2/events sends them, for every order matched to the calling solver, from its ' +
          '`created` event to its end. New events only, or those after Last-Event-ID (`last_event_id=0`: every order ' +
          'ever matched to it); a solver resumes from the last id it handled and misses nothing.',
        tags,
        querystring: Type.Object(RESUME_QUERY, { additionalProperties: false }),
        produces: ['text/event-stream'],
        response: { 200: EVENT_STREAM_RESPONSE, ...errorResponses(400, 401, 503) },
      },
    },
    async (request, reply) => events.serveStream(request, reply, { solverId: request.solver!.id }),
  );
}
