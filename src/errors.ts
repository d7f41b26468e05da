// The error envelope (docs/api.md): ApiError, the SQLSTATE -> HTTP map, and the one error handler every route shares.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PATTERN_RULES } from './schemas/common.ts';

export type ErrorCode =
  | 'bad_request'
  | 'unauthorized'
  | 'payment_required'
  | 'rest_disabled'
  | 'mcp_disabled'
  | 'feature_not_in_plan'
  | 'not_found'
  | 'method_not_allowed'
  | 'payload_too_large'
  | 'request_timeout'
  | 'headers_too_large'
  | 'rate_limited'
  | 'service_unavailable'
  | 'internal_error';

export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: ErrorCode,
    message: string,
    readonly headers: Record<string, string | number> = {},
  ) {
    super(message);
  }
}

export const badRequest = (message: string) => new ApiError(400, 'bad_request', message);
export const notFound = (message: string) => new ApiError(404, 'not_found', message);
export const routeNotFound = (request: FastifyRequest) =>
  notFound(`No route for ${request.method} ${request.url.split('?')[0]}.`);

/** SQLSTATEs our SQL raises on purpose or that bad input can cause, and what the client gets for them. */
const SQLSTATE_TO_HTTP: Record<string, { status: number; code: ErrorCode }> = {
  '22023': { status: 400, code: 'bad_request' }, // invalid_parameter_value: raised by api.* on bad input
  '22P02': { status: 400, code: 'bad_request' }, // invalid_text_representation
  '22007': { status: 400, code: 'bad_request' }, // invalid_datetime_format
  '22008': { status: 400, code: 'bad_request' }, // datetime_field_overflow
  '22003': { status: 400, code: 'bad_request' }, // numeric_value_out_of_range
  '2201B': { status: 400, code: 'bad_request' }, // invalid_regular_expression
  '22021': { status: 400, code: 'bad_request' }, // character_not_in_repertoire: a NUL in a text value
  '57014': { status: 503, code: 'service_unavailable' }, // query_canceled (statement timeout)
  '53300': { status: 503, code: 'service_unavailable' }, // too_many_connections
};

/** Longest error message sent: one that repeats what a client sent is cut there. */
export const MAX_MESSAGE_LENGTH = 500;

/** `text` cut to at most `max` characters (an ellipsis marks the cut). */
export function clip(text: string, max = MAX_MESSAGE_LENGTH): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export function errorEnvelope(requestId: string, code: ErrorCode, message: string) {
  return { error: { code, message: clip(message), request_id: requestId } };
}

export function errorBody(request: FastifyRequest, code: ErrorCode, message: string) {
  return errorEnvelope(request.id, code, message);
}

/** Sets the error's status and headers on the reply; returns the envelope to send. */
export function prepareError(reply: FastifyReply, error: ApiError) {
  reply.header('X-Request-Id', reply.request.id);
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  reply.code(error.statusCode);
  return errorBody(reply.request, error.code, error.message);
}

export function sendError(reply: FastifyReply, error: ApiError) {
  return reply.send(prepareError(reply, error));
}

/** Turns anything thrown into the error envelope; only unexpected errors are logged as errors. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  const e = error as FastifyError & { code?: string; severity?: string; query?: string };
  if (e.validation) return badRequest(validationMessage(e));
  if (typeof e.code === 'string' && e.severity !== undefined) {
    const mapped = SQLSTATE_TO_HTTP[e.code];
    if (mapped) {
      const message =
        mapped.status !== 400
          ? 'The service is busy; retry with backoff.'
          : e.code === '22021'
            ? 'A text value contains a NUL character (\\u0000), which no text field can hold.'
            : e.message;
      return new ApiError(mapped.status, mapped.code, message);
    }
  }
  const status = e.statusCode ?? 500;
  if (status === 413) return new ApiError(413, 'payload_too_large', 'Request body too large.');
  if (status === 405) return new ApiError(405, 'method_not_allowed', 'Method not allowed.');
  if (status >= 400 && status < 500) return badRequest(e.message || 'Bad request.');
  return new ApiError(500, 'internal_error', 'Internal server error; retry with backoff.');
}

/** "limit: must be <= 500" style messages that name the parameter and the rule. */
function validationMessage(e: FastifyError): string {
  const first = e.validation?.[0];
  if (!first) return e.message;
  const where = e.validationContext ?? 'request';
  const path = first.instancePath.replace(/^\//, '').replace(/\//g, '.');
  const missing = (first.params as { missingProperty?: string } | undefined)?.missingProperty;
  const name = missing ?? path;
  const what = where === 'querystring' ? 'query parameter' : where === 'params' ? 'path parameter' : where;
  if (missing) return `${what} '${missing}' is required`;
  const params = first.params as { allowedValues?: unknown[]; pattern?: string } | undefined;
  const rule =
    first.keyword === 'finite'
      ? 'must be a finite number'
      : params?.allowedValues
        ? `must be one of: ${params.allowedValues.join(', ')}`
        : ((params?.pattern && PATTERN_RULES.get(params.pattern)) ?? first.message ?? 'is invalid');
  return `${what} '${name}' ${rule}`;
}

export function registerErrorHandling(app: FastifyInstance) {
  app.setErrorHandler((error, request, reply) => {
    const apiError = toApiError(error);
    if (apiError.statusCode >= 500) request.log.error({ err: error }, 'request failed');
    return sendError(reply, apiError);
  });
  app.setNotFoundHandler((request, reply) => sendError(reply, routeNotFound(request)));
}
