// Code samples for every operation of the OpenAPI document, in curl, JavaScript (the typed client of
// clients/typescript) and Python, written from the operation itself (its path, method, required parameters and
// request body), so a new operation gets them without anyone writing them and a changed one cannot keep stale ones.
// They go in the document as `x-codeSamples` (the extension Redoc, Scalar and ReadMe read), and the reference page
// shows them under each operation's description.

export interface CodeSample {
  lang: 'Shell' | 'JavaScript' | 'Python';
  label: string;
  source: string;
}

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema?: { default?: unknown; examples?: unknown[]; enum?: unknown[]; minimum?: number; type?: string };
  example?: unknown;
  examples?: Record<string, { value: unknown }>;
}

export interface Operation {
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: unknown; example?: unknown }> };
  deprecated?: boolean;
  [key: string]: unknown;
}

/** Values that answer on the fixtures and read naturally in a sample, by parameter name. */
const EXAMPLE_VALUES: Record<string, unknown> = {
  county: 'miami-dade',
  id: 1,
  parcel_id: '01-3132-035-0010',
  query: 'smith john',
  q: 'smith jo',
  limit: 2,
  offset: 0,
  z: 14,
  x: 4552,
  y: 7100,
};

/** A parameter's example: its own, its schema's, then a value by its name, its default, its first allowed value. */
export function exampleValue(p: Parameter): unknown {
  if (p.example !== undefined) return p.example;
  if (p.schema?.examples?.length) return p.schema.examples[0];
  if (p.name in EXAMPLE_VALUES) return EXAMPLE_VALUES[p.name];
  if (p.schema?.default !== undefined) return p.schema.default;
  if (p.schema?.enum?.length) return p.schema.enum[0];
  return p.schema?.type === 'integer' || p.schema?.type === 'number' ? (p.schema.minimum ?? 1) : 'value';
}

/** The request body's example: the media type's own, else the schema's first example. */
function bodyExample(op: Operation): unknown {
  const media = op.requestBody?.content?.['application/json'];
  if (!media) return undefined;
  if (media.example !== undefined) return media.example;
  const schema = media.schema as { examples?: unknown[] } | undefined;
  return schema?.examples?.[0] ?? {};
}

const pyLiteral = (v: unknown): string =>
  v === null
    ? 'None'
    : v === true
      ? 'True'
      : v === false
        ? 'False'
        : Array.isArray(v)
          ? `[${v.map(pyLiteral).join(', ')}]`
          : typeof v === 'object'
            ? `{${Object.entries(v as object)
                .map(([k, x]) => `${JSON.stringify(k)}: ${pyLiteral(x)}`)
                .join(', ')}}`
            : JSON.stringify(v);

/** A value as JavaScript source, the way a person writes it: `{ id: 1, county: 'miami-dade' }`. */
const jsLiteral = (v: unknown): string =>
  Array.isArray(v)
    ? `[${v.map(jsLiteral).join(', ')}]`
    : v && typeof v === 'object'
      ? `{ ${Object.entries(v)
          .map(([k, x]) => `${/^[A-Za-z_$][\w$]*$/.test(k) ? k : `'${k}'`}: ${jsLiteral(x)}`)
          .join(', ')} }`
      : typeof v === 'string'
        ? `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`
        : JSON.stringify(v);

export function codeSamples(baseUrl: string, path: string, method: string, op: Operation): CodeSample[] {
  const params = (op.parameters ?? []).filter((p) => p.required || p.in === 'path');
  const pathValues = Object.fromEntries(params.filter((p) => p.in === 'path').map((p) => [p.name, exampleValue(p)]));
  const query = Object.fromEntries(params.filter((p) => p.in === 'query').map((p) => [p.name, exampleValue(p)]));
  const concrete = path.replace(/\{(\w+)\}/g, (_m, name: string) => encodeURIComponent(String(pathValues[name])));
  const search = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)])).toString();
  const url = `${baseUrl}${concrete}${search ? `?${search}` : ''}`;
  const body = bodyExample(op);
  const verb = method.toUpperCase();

  const curl = [`curl${verb === 'GET' ? '' : ` -X ${verb}`} "${url}"`, '  -H "Authorization: Bearer $FLPROP_KEY"'];
  if (body !== undefined) {
    curl.push('  -H "Content-Type: application/json"', `  -d '${JSON.stringify(body)}'`);
  }

  const options: string[] = [];
  const jsParams: string[] = [];
  if (Object.keys(pathValues).length) jsParams.push(`path: ${jsLiteral(pathValues)}`);
  if (Object.keys(query).length) jsParams.push(`query: ${jsLiteral(query)}`);
  if (jsParams.length) options.push(`params: { ${jsParams.join(', ')} }`);
  if (body !== undefined) options.push(`body: ${jsLiteral(body)}`);
  const js = [
    "import { createFloridaClient } from './florida-client/index.ts';",
    '',
    `const api = createFloridaClient({ baseUrl: '${baseUrl}', apiKey: process.env.FLPROP_KEY });`,
    `const { data, error } = await api.${verb}('${path}'${options.length ? `, { ${options.join(', ')} }` : ''});`,
    'if (error) throw new Error(error.error.message);',
    'console.log(data);',
  ];

  const pyArgs = [`"${baseUrl}${concrete}"`, 'headers={"Authorization": f"Bearer {os.environ[\'FLPROP_KEY\']}"}'];
  if (Object.keys(query).length) pyArgs.push(`params=${pyLiteral(query)}`);
  if (body !== undefined) pyArgs.push(`json=${pyLiteral(body)}`);
  const py = [
    'import os',
    'import requests',
    '',
    `response = requests.${method.toLowerCase()}(`,
    ...pyArgs.map((a) => `    ${a},`),
    ')',
    'response.raise_for_status()',
    verb === 'DELETE' ? 'print(response.status_code)' : 'print(response.json())',
  ];

  return [
    { lang: 'Shell', label: 'curl', source: curl.join(' \\\n') },
    { lang: 'JavaScript', label: 'JavaScript', source: js.join('\n') },
    { lang: 'Python', label: 'Python', source: py.join('\n') },
  ];
}

/** The samples as the Markdown the reference page appends to an operation's description. */
export function samplesMarkdown(samples: CodeSample[]): string {
  const fence = { Shell: 'bash', JavaScript: 'js', Python: 'python' } as const;
  return samples.map((s) => `**${s.label}**\n\n\`\`\`${fence[s.lang]}\n${s.source}\n\`\`\``).join('\n\n');
}
