/**
 * The API reference as one HTML page, rendered on the server from the OpenAPI document: no
 * script, no external asset, nothing to build. Served at `GET /docs`.
 */

type Json = Record<string, unknown>;

const methods = ['get', 'post', 'put', 'patch', 'delete'] as const;

function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** The small Markdown subset of our descriptions: paragraphs, `code` and **bold**. */
function markdown(text: string | undefined): string {
  if (!text) return '';
  return text
    .split(/\n{2,}/)
    .map((paragraph) => {
      const inline = escapeHtml(paragraph.replace(/\n/g, ' '))
        .replace(/`([^`]+)`/g, '<code>$1</code>')
        .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>');
      return `<p>${inline}</p>`;
    })
    .join('\n');
}

function anchor(...parts: string[]): string {
  return parts
    .join('-')
    .replace(/[^A-Za-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
    .toLowerCase();
}

function resolve(document: Json, value: unknown): Json {
  const ref = (value as { $ref?: string } | undefined)?.$ref;
  if (!ref?.startsWith('#/')) return (value ?? {}) as Json;
  let node: unknown = document;
  for (const part of ref.slice(2).split('/')) node = (node as Json | undefined)?.[part.replace(/~1/g, '/')];
  return (node ?? {}) as Json;
}

function typeText(schema: Json): string {
  const type = schema.type;
  const text = Array.isArray(type) ? type.join(' | ') : typeof type === 'string' ? type : 'any';
  if (text === 'array') return `array of ${typeText((schema.items ?? {}) as Json)}`;
  if (schema.oneOf) return (schema.oneOf as Json[]).map(typeText).join(' | ');
  return text;
}

function constraints(schema: Json): string {
  const notes: string[] = [];
  if (Array.isArray(schema.enum))
    notes.push(`one of ${schema.enum.map((v) => `<code>${escapeHtml(String(v))}</code>`).join(', ')}`);
  for (const key of [
    'minLength',
    'maxLength',
    'minimum',
    'maximum',
    'maxProperties',
    'default',
    'format',
    'pattern',
  ]) {
    if (schema[key] !== undefined) notes.push(`${key} <code>${escapeHtml(String(schema[key]))}</code>`);
  }
  return notes.join('; ');
}

/** A schema as rows of a table: one per property, nested objects indented. */
function schemaRows(schema: Json, depth: number, prefix: string): string {
  const properties = (schema.properties ?? {}) as Record<string, Json>;
  const required = new Set((schema.required ?? []) as string[]);
  const rows: string[] = [];
  for (const [name, property] of Object.entries(properties)) {
    const item = property.type === 'array' ? ((property.items ?? {}) as Json) : property;
    rows.push(
      `<tr><td><code>${escapeHtml(prefix + name)}</code>${required.has(name) ? ' <span class="req">required</span>' : ''}</td>` +
        `<td>${escapeHtml(typeText(property))}</td><td>${markdown(property.description as string | undefined)}${constraints(property)}</td></tr>`,
    );
    if (depth < 4 && item.properties)
      rows.push(schemaRows(item, depth + 1, `${prefix}${name}${item === property ? '' : '[]'}.`));
  }
  return rows.join('\n');
}

function schemaBlock(schema: Json | undefined): string {
  if (!schema) return '';
  const examples = schema.examples as unknown[] | undefined;
  const table = schema.properties
    ? `<table><thead><tr><th>Field</th><th>Type</th><th>Notes</th></tr></thead><tbody>${schemaRows(schema, 0, '')}</tbody></table>`
    : `<p>${escapeHtml(typeText(schema))}</p>`;
  const example =
    examples?.[0] === undefined ? '' : `<pre>${escapeHtml(JSON.stringify(examples[0], null, 2))}</pre>`;
  return table + example;
}

function parametersBlock(document: Json, parameters: Json[] | undefined): string {
  if (!parameters?.length) return '';
  const rows = parameters.map((raw) => {
    const parameter = resolve(document, raw);
    const schema = (parameter.schema ?? {}) as Json;
    return (
      `<tr><td><code>${escapeHtml(String(parameter.name))}</code>${parameter.required ? ' <span class="req">required</span>' : ''}</td>` +
      `<td>${escapeHtml(String(parameter.in))}</td><td>${escapeHtml(typeText(schema))}</td>` +
      `<td>${markdown(parameter.description as string | undefined)}${constraints(schema)}</td></tr>`
    );
  });
  return `<h4>Parameters</h4><table><thead><tr><th>Name</th><th>In</th><th>Type</th><th>Notes</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

function responsesBlock(document: Json, responses: Record<string, Json>): string {
  const parts = Object.entries(responses).map(([status, response]) => {
    const headers = Object.entries((response.headers ?? {}) as Record<string, unknown>)
      .map(([name, header]) => {
        const resolved = resolve(document, header);
        return `<li><code>${escapeHtml(name)}</code>${resolved.required ? ' <span class="req">always</span>' : ''} ${markdown(resolved.description as string | undefined).replace(/<\/?p>/g, '')}</li>`;
      })
      .join('');
    const content = (response.content ?? {}) as Record<string, Json>;
    const body = Object.entries(content)
      .map(
        ([mediaType, media]) =>
          `<p class="media">${escapeHtml(mediaType)}</p>${schemaBlock(media.schema as Json | undefined)}`,
      )
      .join('');
    const kind = status.startsWith('2') ? 'ok' : 'err';
    return (
      `<details${kind === 'ok' ? ' open' : ''}><summary><span class="status ${kind}">${escapeHtml(status)}</span> ` +
      `${markdown(response.description as string | undefined).replace(/<\/?p>/g, '')}</summary>` +
      `${headers ? `<ul class="headers">${headers}</ul>` : ''}${body}</details>`
    );
  });
  return `<h4>Responses</h4>${parts.join('\n')}`;
}

function operationBlock(document: Json, method: string, path: string, operation: Json, id: string): string {
  const requestBody = (operation.requestBody as Json | undefined)?.content as
    | Record<string, Json>
    | undefined;
  const auth =
    Array.isArray(operation.security) && operation.security.length === 0
      ? 'No API key.'
      : 'API key: <code>X-API-Key</code>.';
  return `<section class="operation" id="${id}">
<h3><span class="method ${method}">${method.toUpperCase()}</span> <code>${escapeHtml(path)}</code></h3>
<p class="summary">${escapeHtml(String(operation.summary ?? ''))} <small>${auth} <code>${escapeHtml(String(operation.operationId ?? ''))}</code></small></p>
${markdown(operation.description as string | undefined)}
${parametersBlock(document, operation.parameters as Json[] | undefined)}
${requestBody ? `<h4>Request body</h4>${schemaBlock(requestBody['application/json']?.schema as Json | undefined)}` : ''}
${responsesBlock(document, (operation.responses ?? {}) as Record<string, Json>)}
</section>`;
}

/** Renders the whole reference page from an OpenAPI 3.1 document. */
export function renderReferencePage(document: Json): string {
  const info = (document.info ?? {}) as Json;
  const tags = (document.tags ?? []) as Array<{ name: string; description?: string }>;
  const entries: Array<{ tag: string; method: string; path: string; operation: Json; id: string }> = [];
  const collect = (group: Record<string, Json>, kind: string) => {
    for (const [path, item] of Object.entries(group)) {
      for (const method of methods) {
        const operation = item[method] as Json | undefined;
        if (!operation) continue;
        const tag = ((operation.tags as string[] | undefined) ?? ['other'])[0] ?? 'other';
        entries.push({
          tag,
          method,
          path: kind === 'webhook' ? `webhook ${path}` : path,
          operation,
          id: anchor(kind, method, path),
        });
      }
    }
  };
  collect((document.paths ?? {}) as Record<string, Json>, 'op');
  collect((document.webhooks ?? {}) as Record<string, Json>, 'webhook');

  const tagNames = [...new Set([...tags.map((tag) => tag.name), ...entries.map((entry) => entry.tag)])];
  const nav = tagNames
    .map((name) => {
      const links = entries
        .filter((entry) => entry.tag === name)
        .map(
          (entry) =>
            `<li><a href="#${entry.id}"><span class="method ${entry.method}">${entry.method.toUpperCase()}</span> ${escapeHtml(entry.path)}</a></li>`,
        )
        .join('');
      return `<h2><a href="#tag-${anchor(name)}">${escapeHtml(name)}</a></h2><ul>${links}</ul>`;
    })
    .join('\n');
  const sections = tagNames
    .map((name) => {
      const tag = tags.find((candidate) => candidate.name === name);
      const operations = entries.filter((entry) => entry.tag === name);
      return `<section id="tag-${anchor(name)}"><h2>${escapeHtml(name)}</h2>${markdown(tag?.description)}
${operations.map((entry) => operationBlock(document, entry.method, entry.path, entry.operation, entry.id)).join('\n')}</section>`;
    })
    .join('\n');
  const title = `${String(info.title ?? 'API')} ${String(info.version ?? '')}`.trim();
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} reference</title>
<style>${styles}</style></head>
<body><nav aria-label="Operations"><p><strong>${escapeHtml(title)}</strong></p><p><a href="/v1/openapi.json">openapi.json</a></p>${nav}</nav>
<main><h1>${escapeHtml(String(info.title ?? 'API'))} <small>${escapeHtml(String(info.version ?? ''))}</small></h1>
${markdown(info.description as string | undefined)}
${sections}</main></body></html>`;
}

const styles = `
body{margin:0;font:15px/1.5 system-ui,sans-serif;color:#1d2330;display:grid;grid-template-columns:19rem 1fr}
nav{position:sticky;top:0;height:100vh;overflow:auto;padding:1rem;background:#f3f5f9;border-right:1px solid #d8dde6;box-sizing:border-box}
nav h2{font-size:.8rem;text-transform:uppercase;margin:1rem 0 .3rem}nav ul{list-style:none;padding:0;margin:0}
nav li{margin:.15rem 0;font-size:.85rem;word-break:break-all}nav a{color:inherit;text-decoration:none}
main{padding:1rem 2rem;max-width:60rem;min-width:0}code,pre{font-family:ui-monospace,monospace;font-size:.85em}
pre{background:#1d2330;color:#e8ecf3;padding:.75rem;overflow:auto;border-radius:4px}
.operation{border-top:1px solid #d8dde6;padding-top:.5rem;margin-top:1.5rem}
.method{display:inline-block;min-width:3.2rem;text-align:center;border-radius:3px;color:#fff;font-size:.75rem;font-weight:700;padding:0 .3rem}
.get{background:#2f6fb5}.post{background:#2e8540}.put,.patch{background:#a0661c}.delete{background:#b03030}
table{border-collapse:collapse;width:100%;margin:.5rem 0}th,td{border:1px solid #d8dde6;padding:.25rem .5rem;text-align:left;vertical-align:top}
td p{margin:0}.req{color:#b03030;font-size:.75rem}.status{font-weight:700}.status.ok{color:#2e8540}.status.err{color:#b03030}
details{margin:.3rem 0}summary{cursor:pointer}summary p{display:inline}.media{color:#5b6475;margin:.3rem 0}
@media (max-width:50rem){body{display:block}nav{position:static;height:auto}}`;
