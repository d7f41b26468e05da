// The bounds on JSON bodies, read from the text before it is parsed (src/http-edge.ts), and the cut of error messages
// (src/errors.ts).
import t from 'tap';
import { MAX_JSON_DEPTH, MAX_JSON_ENTRIES, jsonShapeProblem } from '../src/http-edge.ts';
import { MAX_MESSAGE_LENGTH, clip, errorEnvelope } from '../src/errors.ts';

const TOO_MANY = /more than 1000 keys and array elements/;
const array = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => i));
const object = (n: number) => JSON.stringify(Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i])));

t.test('keys and array elements are counted over the whole body, exactly', async (t) => {
  t.equal(MAX_JSON_ENTRIES, 1000);
  t.equal(jsonShapeProblem(array(1000)), null, '1,000 elements');
  t.match(jsonShapeProblem(array(1001)), TOO_MANY, '1,001 elements');
  t.equal(jsonShapeProblem(object(1000)), null, '1,000 keys');
  t.match(jsonShapeProblem(object(1001)), TOO_MANY, '1,001 keys');
  // 2 keys + 500 + 499 elements = 1,001; with 498 it is 1,000
  t.match(jsonShapeProblem(`{"a":${array(500)},"b":${array(499)}}`), TOO_MANY, 'summed over containers');
  t.equal(jsonShapeProblem(`{"a":${array(500)},"b":${array(498)}}`), null);
  t.equal(jsonShapeProblem(`[${Array(999).fill('{}').join(',')}]`), null, 'an empty container holds nothing');
  t.equal(jsonShapeProblem(`[${Array(999).fill('[ ]').join(' , ')}]`), null, 'whitespace anywhere');
  t.match(jsonShapeProblem(`[${Array(1001).fill('[ ]').join(' ,\n\t')}]`), TOO_MANY);
  t.equal(jsonShapeProblem('{}'), null);
  t.equal(jsonShapeProblem('"a string"'), null);
  t.equal(jsonShapeProblem('17'), null);
});

t.test('commas, brackets and quotes inside strings are text', async (t) => {
  const text = JSON.stringify({ q: `${',[{'.repeat(2000)}\\"\\\\"`, r: '\\', s: '"' });
  t.equal(jsonShapeProblem(text), null);
  t.same(Object.keys(JSON.parse(text)), ['q', 'r', 's'], 'the text is the JSON it looks like');
  // a string ending in an escaped backslash closes at the next quote: the commas after it count
  t.match(jsonShapeProblem(`["\\\\",${array(1000).slice(1)}`), TOO_MANY);
  t.equal(jsonShapeProblem(`["\\"${','.repeat(5000)}"]`), null, 'an escaped quote does not close the string');
  t.equal(jsonShapeProblem(`["${','.repeat(5000)}`), null, 'an unclosed string: left to the parser');
});

t.test('nesting is bounded too, in the same pass', async (t) => {
  t.equal(jsonShapeProblem(`${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}`), null);
  t.match(jsonShapeProblem(`${'['.repeat(MAX_JSON_DEPTH + 1)}${']'.repeat(MAX_JSON_DEPTH + 1)}`), /deeper than 64/);
  t.match(jsonShapeProblem('['.repeat(200_000)), /deeper than 64/, 'stops at the first excess');
});

t.test('an error message is cut to a bounded length', async (t) => {
  t.equal(clip('short'), 'short');
  const long = clip('x'.repeat(100_000));
  t.equal(long.length, MAX_MESSAGE_LENGTH);
  t.ok(long.endsWith('…'), 'the cut is marked');
  t.equal(errorEnvelope('req_x', 'not_found', 'y'.repeat(10_000)).error.message.length, MAX_MESSAGE_LENGTH);
});
