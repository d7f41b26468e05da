// Requests in flight per client, beside the per-minute limit: how many may run at once, by plan. The count is kept in
// Redis with the window (lua/admit-one.lua), so it is exact across API processes; a request leaves it when its answer
// is done or abandoned (Turns.release), and a lease bounds what a dead process can leave behind.
import type { FastifyReply, FastifyRequest } from 'fastify';

/** Every plan may run at least this many requests at once. */
export const IN_FLIGHT_MIN = 2;
/** The per-minute limit divided by this is the in-flight cap: a client can spend its whole minute on 3 s requests. */
const RPM_PER_SLOT = 20;

/**
 * A client's cap on requests in flight, from its per-minute limit (its plan's or its contract's): Free Trial and MCP
 * Starter 2, Developer 3, Pro 7, Growth 15, Lead Feed 30, Enterprise 60.
 */
export function inFlightCap(rpm: number): number {
  return Math.max(IN_FLIGHT_MIN, Math.floor(rpm / RPM_PER_SLOT));
}

/**
 * Holds an admitted request's slot until its answer is done or abandoned, then calls `release` once: 'close' comes
 * after the answer is sent, and when the client goes away first; a request already closed releases at once.
 */
export function slotHolder(release: (request: FastifyRequest, clientId: string) => void) {
  const holding = new WeakSet<FastifyRequest>();
  return (request: FastifyRequest, reply: FastifyReply, clientId: string) => {
    if (holding.has(request)) return;
    holding.add(request);
    const done = () => release(request, clientId);
    if (reply.raw.closed) done();
    else reply.raw.once('close', done);
  };
}
