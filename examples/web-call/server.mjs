// A customer's site with a "Talk to us" button: this server keeps the API key and asks callwright
// for a one-use web call token; the page (index.html) starts the call with callwright/web.
//
//   CALLWRIGHT_URL=http://localhost:3000 CALLWRIGHT_API_KEY=cw_… AGENT_ID=agt_… \
//     VARIABLES='{"customer_name":"Ann","appointment_day":"Tuesday"}' node examples/web-call/server.mjs
//
// Then allow this page's origin once (PUT /v1/web-calls/origins) and open http://localhost:8080.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';

const page = readFileSync(new URL('./index.html', import.meta.url), 'utf8');

/** The example site: GET / is the page, POST /web-call-token asks callwright for a token. */
export function createExampleSite({ serviceUrl, apiKey, agentId, variables = {} }) {
  return createServer(async (request, response) => {
    if (request.method === 'GET' && (request.url === '/' || request.url === '/index.html')) {
      response.setHeader('Content-Type', 'text/html; charset=utf-8');
      response.end(page.replaceAll('__CALLWRIGHT_URL__', serviceUrl).replaceAll('__AGENT_ID__', agentId));
      return;
    }
    if (request.method === 'POST' && request.url === '/web-call-token') {
      // Your own checks go here (a signed-in visitor, a captcha…): the token starts a billed call.
      const created = await fetch(`${serviceUrl}/v1/web-calls`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-API-Key': apiKey },
        body: JSON.stringify({ agent_id: agentId, variables, metadata: { site: 'example' } }),
      });
      const body = await created.json();
      response.statusCode = created.status;
      response.setHeader('Content-Type', 'application/json');
      // Only what the page needs: never the API key.
      response.end(
        JSON.stringify(
          created.ok ? { token: body.token, ice_servers: body.ice_servers, call_id: body.call_id } : body,
        ),
      );
      return;
    }
    response.statusCode = 404;
    response.end('not found');
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { CALLWRIGHT_URL, CALLWRIGHT_API_KEY, AGENT_ID, PORT = '8080', VARIABLES = '{}' } = process.env;
  if (!CALLWRIGHT_URL || !CALLWRIGHT_API_KEY || !AGENT_ID) {
    console.error('set CALLWRIGHT_URL, CALLWRIGHT_API_KEY and AGENT_ID');
    process.exit(1);
  }
  const site = createExampleSite({
    serviceUrl: CALLWRIGHT_URL,
    apiKey: CALLWRIGHT_API_KEY,
    agentId: AGENT_ID,
    // The agent's variables for this visitor, e.g. {"customer_name": "Ann"} (JSON).
    variables: JSON.parse(VARIABLES),
  });
  site.listen(Number(PORT), 'localhost', () =>
    console.log(`example site on http://localhost:${site.address().port}`),
  );
}
