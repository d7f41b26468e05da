// The edge of HTTP: answers for requests that never reach a route (Node's parser or the router refused them, the head
// is too large, the URL too long, the Host header missing, the query string's percent-encoding malformed), all in the
// error envelope; the security headers every answer carries; the bounds on JSON bodies; and the URL as it may be
// logged. Every check here runs before any work that grows faster than the input.
import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import secureJson from 'secure-json-parse';
import type { FastifyError, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { badRequest, errorEnvelope, routeNotFound, sendError } from './errors.ts';
import { newRequestId } from './request-id.ts';

/** Longest URL accepted; longer ones get a 400 in the envelope. */
export const MAX_URL_LENGTH = 8192;
/** Longest path segment the router matches as a parameter (its `maxParamLength`); longer ones get a 400. */
export const MAX_PATH_SEGMENT = 200;
/** Largest request line plus headers Node parses; beyond it Node's parser stops and `answerClientError` says 431. */
export const MAX_HEAD_BYTES = 65536;
/** How long a refused connection may take to read its 400 before it is closed regardless. */
const CLOSE_GRACE_MS = 2000;
/** How much of a URL the request log keeps. */
const LOGGED_URL_MAX = 1024;
/** One of our keys as it may sit in a URL: underscores percent-encoded or not; a tail cut off by truncation too. */
const KEY_IN_URL = /flprop(?:_|%5f)(?:live|test)(?:_|%5f)[a-z0-9]*/gi;
/** A `%` not followed by two hex digits. */
const BAD_PERCENT = /%(?![0-9a-f]{2})/i;

/** The URL as the log may show it: at most LOGGED_URL_MAX characters, and keys never, wherever a client put one. */
export function loggableUrl(url: string): string {
  const shown = url.length > LOGGED_URL_MAX ? `${url.slice(0, LOGGED_URL_MAX)}…(${url.length} characters)` : url;
  return shown.replace(KEY_IN_URL, '[REDACTED]');
}

/**
 * Sent with every answer: no MIME sniffing, no framing, and a policy under which an answer opened as a page runs and
 * loads nothing. Set on the raw response, so that a page's own policy (the site's and the explorer's helmet, the docs
 * page's) replaces them.
 */
const SECURITY_HEADERS = [
  ['X-Content-Type-Options', 'nosniff'],
  ['X-Frame-Options', 'DENY'],
  ['Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'"],
] as const;

function setSecurityHeaders(reply: FastifyReply) {
  for (const [name, value] of SECURITY_HEADERS) reply.raw.setHeader(name, value);
}

/**
 * What is wrong with a request before anything else is looked at: a URL over MAX_URL_LENGTH, an HTTP/1.1 request
 * without Host, or a query string whose percent-encoding is malformed (the parser would otherwise take `%ZZ`
 * literally); null when nothing is.
 */
function edgeProblem(request: FastifyRequest): string | null {
  const url = request.url;
  if (url.length > MAX_URL_LENGTH) return `The URL is longer than ${MAX_URL_LENGTH} characters.`;
  if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) return 'The Host header is required.';
  const query = url.indexOf('?');
  if (query >= 0 && BAD_PERCENT.test(url.slice(query))) {
    return "The query string has a malformed percent-encoding: '%' must be followed by two hex digits.";
  }
  return null;
}

/** onRequest, first of all: the security headers, then edgeProblem's 400 before any other work. */
export function checkRequestEdge(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) {
  reply.header('X-Request-Id', request.id);
  setSecurityHeaders(reply);
  const problem = edgeProblem(request);
  if (problem !== null) return sendError(reply, badRequest(problem)); // answered: the request goes no further
  // a body sent to a path no route serves is answered before it is read, so no key is needed to make us parse it
  const headers = request.headers;
  const hasBody = (headers['content-length'] ?? '0') !== '0' || headers['transfer-encoding'] !== undefined;
  if (request.is404 && hasBody) return sendError(reply, routeNotFound(request));
  done();
}

/** What the router's refusals (Fastify's error codes) are answered with; none repeats the path. */
const ROUTER_REFUSALS: Record<string, string> = {
  FST_ERR_BAD_URL: "The path has a malformed percent-encoding: '%' must start an escape of valid UTF-8, like %20.",
  FST_ERR_MAX_PARAM_LENGTH: `A path segment is longer than ${MAX_PATH_SEGMENT} characters.`,
};

/**
 * Fastify's `frameworkErrors`: the router refused the path before any hook ran. The edge checks come first here too,
 * so an over-long URL gets the same answer wherever it fails.
 */
export function answerFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  setSecurityHeaders(reply);
  const problem = edgeProblem(request) ?? ROUTER_REFUSALS[error.code] ?? 'The request path is not valid.';
  return sendError(reply, badRequest(problem));
}

/**
 * Node's `clientError`: a request its HTTP parser refused (bad method or header bytes, conflicting lengths, a head
 * over MAX_HEAD_BYTES, a timeout). Fastify never sees these; they get the envelope too, with a fresh request id, and
 * the connection closes (the parser cannot find where the next request would start).
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: Socket) {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, code, message] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [
          431,
          'headers_too_large' as const,
          `The request line and headers are larger than ${MAX_HEAD_BYTES} bytes (a URL may have at most ${MAX_URL_LENGTH} characters).`,
        ]
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'request_timeout' as const, 'The request was not received in time.']
        : [400, 'bad_request' as const, 'The request is not valid HTTP/1.1.'];
  const id = newRequestId();
  const body = JSON.stringify(errorEnvelope(id, code, message));
  // A request before this one on the connection is still being answered: let that answer finish, then close (the
  // parser cannot find where another request would start). Never write into it, or the client would read both.
  const inFlight = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
  if (inFlight) {
    inFlight.shouldKeepAlive = false;
    if (inFlight.writableFinished) socket.end();
    else inFlight.once('finish', () => socket.end());
    return;
  }
  if (socket.writable) {
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${id}\r\n` +
        SECURITY_HEADERS.map(([name, value]) => `${name}: ${value}\r\n`).join('') +
        `Connection: close\r\n\r\n${body}`,
    );
  }
  setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
}

/** Deepest nesting of arrays and objects a JSON body may have; deeper ones would overflow recursive code. */
export const MAX_JSON_DEPTH = 64;
/** Most keys and array elements a JSON body may hold in all, so that every walk over a parsed body is short. */
export const MAX_JSON_ENTRIES = 1000;

const TOO_DEEP = `The JSON body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels.`;
const TOO_MANY_ENTRIES =
  `The JSON body holds more than ${MAX_JSON_ENTRIES} keys and array elements in all; ` +
  `send at most ${MAX_JSON_ENTRIES}.`;

/** The index of the quote that closes the string literal opened at `open`, or -1 when it is never closed. */
function closingQuote(text: string, open: number): number {
  for (let q = text.indexOf('"', open + 1); q >= 0; q = text.indexOf('"', q + 1)) {
    let backslashes = 0;
    while (text.charCodeAt(q - 1 - backslashes) === 92 /* \ */) backslashes++;
    if (backslashes % 2 === 0) return q; // not escaped
  }
  return -1;
}

/**
 * What would make JSON text costly to parse or to walk, found before it is parsed: nesting deeper than
 * MAX_JSON_DEPTH, or more than MAX_JSON_ENTRIES keys and array elements in all. One pass that jumps over string
 * literals with indexOf and stops at the first excess, with no allocation; null when within bounds or when the text
 * is not JSON (the parser then says why).
 */
export function jsonShapeProblem(text: string): string | null {
  let depth = 0;
  let entries = 0;
  let opened = false; // the last token opened a container: the next one, unless it closes it, is its first entry
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 32 || c === 10 || c === 13 || c === 9) continue; // whitespace
    if (opened && c !== 93 /* ] */ && c !== 125 /* } */) entries++;
    opened = false;
    if (c === 34 /* " */) {
      i = closingQuote(text, i);
      if (i < 0) return null;
    } else if (c === 44 /* , */) entries++;
    else if (c === 91 /* [ */ || c === 123 /* { */) {
      if (++depth > MAX_JSON_DEPTH) return TOO_DEEP;
      opened = true;
    } else if (c === 93 || c === 125) depth--;
    if (entries > MAX_JSON_ENTRIES) return TOO_MANY_ENTRIES;
  }
  return null;
}

/**
 * JSON bodies (every route's), parsed with secure-json-parse like Fastify's own parser, but saying what is wrong:
 * nesting deeper than MAX_JSON_DEPTH or more than MAX_JSON_ENTRIES keys and elements (refused before parsing), the
 * JSON error, or a `__proto__` / `constructor.prototype` key (refused rather than silently dropped).
 */
export function parseJsonBody(
  _request: FastifyRequest,
  body: string,
  done: (err: Error | null, body?: unknown) => void,
) {
  if (body.length === 0) return done(badRequest('The body is empty; send a JSON value.'));
  const problem = jsonShapeProblem(body);
  if (problem !== null) return done(badRequest(problem));
  try {
    done(null, secureJson.parse(body, null, { protoAction: 'error', constructorAction: 'error' }));
  } catch (err) {
    const message = (err as Error).message;
    done(
      badRequest(
        message.includes('forbidden prototype property')
          ? "The JSON body has a key named '__proto__' or 'constructor.prototype'; such keys are refused."
          : `The body is not valid JSON: ${message}.`,
      ),
    );
  }
}
