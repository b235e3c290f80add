import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';

const HEADER = 'x-hashlock-in-process';

/**
 * Marks the requests this process makes of its own routes (the MCP server's tool calls at /mcp), so
 * the request that carried them is the one that counts against the rate limit. The mark is a random
 * token that never leaves the process, so no client can send it.
 */
export class InProcessRequests {
  private readonly token = randomBytes(32);

  headers(): Record<string, string> {
    return { [HEADER]: this.token.toString('hex') };
  }

  is(request: FastifyRequest): boolean {
    const value = request.headers[HEADER];
    if (typeof value !== 'string') return false;
    const given = Buffer.from(value, 'hex'); // stops at the first character that is not hex
    return given.length === this.token.length && value.length === given.length * 2 && timingSafeEqual(given, this.token);
  }
}
