// The MCP endpoint (streamable HTTP, stateless: any API process serves any request) at /api/mcp. Same keys and
// 401 as REST; each tools/call costs 1 credit from the shared pool; initialize and tools/list are free (they still
// count against the per-minute limit). A refusal inside a tool call is a tool result with isError, not a crash.
import fp from 'fastify-plugin';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  InitializeRequestSchema,
  JSONRPCRequestSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { Type, type TObject } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { ApiError, clip, sendError, toApiError } from '../errors.ts';
import { TOOLS, type Tool } from './tools.ts';

export const MCP_PATH = '/api/mcp';
const INSTRUCTIONS =
  'Florida statewide property records: parcels (owner, address, values, polygons), recorded sales, counties, and ' +
  'delinquent-tax / tax-certificate records (a certificate is a lien for unpaid taxes, not ownership). Use ' +
  'list_counties for county slugs. Every successful tool call costs 1 credit; get_account_usage is free.';

const byName = new Map(TOOLS.map((t) => [t.name, t]));

// a message may repeat what the client sent (a tool's name, an argument's key): it is cut like every error message
const toolError = (text: string): CallToolResult => ({ isError: true, content: [{ type: 'text', text: clip(text) }] });

/**
 * A tool's outputSchema: its REST answer's schema without `meta`, as plain JSON Schema (no `$id`, which a client
 * compiling the schema would take for a second definition of the same name). None for a tool that declares none.
 */
function outputSchema(tool: Tool): Record<string, unknown> | undefined {
  if (!tool.output) return undefined;
  const body = Type.Omit(tool.output as TObject, ['meta']);
  return JSON.parse(JSON.stringify(body, (key, value: unknown) => (key === '$id' ? undefined : value)));
}

/** "Invalid argument 'limit': must be <= 500" for the first problem TypeBox finds. */
function argumentProblem(tool: Tool, args: unknown): string | null {
  const first = Value.Errors(tool.input, args).First();
  if (!first) return null;
  const name = first.path.replace(/^\//, '').replace(/\//g, '.');
  const allowed = (first.schema as { enum?: unknown[] }).enum;
  const rule = allowed ? `must be one of: ${allowed.join(', ')}` : first.message;
  return name ? `Invalid argument '${name}': ${rule}.` : `Invalid arguments: ${rule}.`;
}

/** The requests this server answers, checked with the SDK's own schemas before the SDK sees them (a failure there
 * is answered -32603 with the validator's whole report). */
interface RequestSchema {
  safeParse(value: unknown): { success: boolean; error?: { issues: { path: PropertyKey[]; message: string }[] } };
}
const REQUEST_SCHEMAS = new Map<unknown, RequestSchema>([
  ['initialize', InitializeRequestSchema],
  ['ping', PingRequestSchema],
  ['tools/list', ListToolsRequestSchema],
  ['tools/call', CallToolRequestSchema],
]);

/** "Invalid params: 'params.name' …" for the first problem of a request this server answers; null when fine. */
function paramsProblem(message: { method?: unknown; params?: unknown }): string | null {
  const params = message.params as { task?: unknown } | undefined;
  if (params?.task !== undefined) return `Invalid params for ${String(message.method)}: tasks are not supported.`;
  const schema = REQUEST_SCHEMAS.get(message.method);
  const parsed = schema?.safeParse(message);
  const issue = parsed && !parsed.success ? parsed.error?.issues[0] : undefined;
  if (!issue) return null;
  const path = issue.path.length > 0 ? issue.path.map(String).join('.') : 'params';
  return `Invalid params for ${String(message.method)}: '${path}' is missing or not valid (${issue.message}).`;
}

function sendJsonRpcError(reply: FastifyReply, status: number, id: unknown, code: number, message: string) {
  const validId = typeof id === 'string' || typeof id === 'number' ? id : null;
  return reply.code(status).send({ jsonrpc: '2.0', id: validId, error: { code, message: clip(message) } });
}

/** Copies the headers metering set on the Fastify reply onto the raw response the transport writes. */
function passHeaders(reply: FastifyReply) {
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined && !reply.raw.headersSent) reply.raw.setHeader(name, value as string);
  }
}

function mcpServer(request: FastifyRequest, reply: FastifyReply) {
  const app = request.server;
  const server = new Server(
    { name: 'florida-property-data', version: '1.0.0' },
    { capabilities: { tools: {} }, instructions: INSTRUCTIONS },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: TOOLS.map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: t.input as never,
      outputSchema: outputSchema(t) as never,
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (call): Promise<CallToolResult> => {
    const tool = byName.get(call.params.name);
    if (!tool) return toolError(`Unknown tool '${call.params.name}'. Call tools/list for the tools.`);
    const args = Value.Default(tool.input, structuredClone(call.params.arguments ?? {}));
    const problem = argumentProblem(tool, args);
    if (problem) return toolError(problem);
    const refusal = await app.admitRequest(request, reply, 'mcp', tool.free === true);
    passHeaders(reply);
    if (refusal) return toolError(refusal.message);
    try {
      const result = await tool.run({ app, auth: request.auth! }, args);
      app.settleRequest(request, true);
      return { content: [{ type: 'text', text: result.summary }], structuredContent: result.structured };
    } catch (err) {
      app.settleRequest(request, false);
      const e = toApiError(err);
      if (e.statusCode >= 500) request.log.error({ err }, 'tool failed');
      return toolError(e.statusCode >= 500 ? 'Internal error; retry with backoff.' : e.message);
    }
  });
  return server;
}

export default fp(async (app) => {
  app.route({
    method: 'POST',
    url: MCP_PATH,
    schema: { hide: true },
    onRequest: [app.authenticate('mcp')],
    // a body refused before the preHandler (not JSON, too large) counts too, with the rate-limit headers
    onError: app.meterError('mcp'),
    // initialize, tools/list, ping and notifications are free but rate-limited; tools/call is admitted per call.
    // A batch (a JSON array) is refused: the protocol dropped batches in 2025-06-18, and one POST must be one metered
    // call. The refusal still counts against the per-minute limit, like every refusal of a known key.
    preHandler: async (request, reply) => {
      const body = request.body as { id?: unknown; method?: unknown } | undefined;
      const batch = Array.isArray(body);
      const problem = !batch && body ? paramsProblem(body) : null;
      // only a well-formed tools/call request reaches a tool, which admits and charges it; anything else is free
      const toolCall =
        body?.method === 'tools/call' && problem === null && JSONRPCRequestSchema.safeParse(body).success;
      if (toolCall) return;
      const refusal = await app.admitRequest(request, reply, 'mcp', true);
      if (refusal) return sendError(reply, refusal);
      if (batch) {
        return sendJsonRpcError(
          reply,
          400,
          null,
          -32600,
          'Batches are not accepted: send one JSON-RPC message per POST.',
        );
      }
      if (problem) return sendJsonRpcError(reply, 200, body?.id, -32602, problem);
    },
    handler: async (request, reply) => {
      passHeaders(reply);
      reply.hijack();
      const server = mcpServer(request, reply);
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      reply.raw.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(request.raw, reply.raw, request.body);
    },
  });
  // Stateless server: no server-initiated stream to GET and no session to DELETE.
  app.route({
    method: ['GET', 'DELETE'],
    url: MCP_PATH,
    schema: { hide: true },
    handler: async (_request, reply) => {
      reply.header('Allow', 'POST');
      return sendError(
        reply,
        new ApiError(405, 'method_not_allowed', 'This MCP endpoint is stateless: POST JSON-RPC messages to it.'),
      );
    },
  });
});
