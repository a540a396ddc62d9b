/**
 * Every command's help, in one table: the global usage and `callwright GROUP [VERB] --help` are
 * both printed from it, and a test checks it against the commands that exist, so they cannot
 * drift apart.
 */

export interface VerbHelp {
  /** After `callwright GROUP VERB`. */
  synopsis: string;
  summary: string;
  /** One line per option or argument: `--name N   what it is`. */
  details?: string[];
  example?: string;
}

export interface GroupHelp {
  summary: string;
  verbs: Record<string, VerbHelp>;
}

export const commandHelp: Record<string, GroupHelp> = {
  serve: {
    summary: 'run the service',
    verbs: {
      '': {
        synopsis: '[--role all|api|worker]',
        summary: 'run the API, dashboard and call worker (with DATABASE_URL, api and worker processes apart)',
        details: ['--role R     all (default), api (HTTP only) or worker (calls only; needs DATABASE_URL)'],
        example: 'callwright serve',
      },
    },
  },
  accounts: {
    summary: 'tenants: each has its own keys, agents, numbers and calls',
    verbs: {
      create: {
        synopsis: '--name NAME [--rate-limit 100/10s] [--max-live-calls N]',
        summary: 'create an account',
        details: [
          '--name NAME            1 to 200 characters',
          '--rate-limit R         its own API rate limit, requests/seconds (default: CALLWRIGHT_RATE_LIMIT)',
          '--max-live-calls N     calls live at once (default 10)',
        ],
        example: 'callwright accounts create --name "Clinic B" --rate-limit 50/10s',
      },
      list: { synopsis: '', summary: 'list the accounts' },
    },
  },
  keys: {
    summary: 'API keys (the X-API-Key header)',
    verbs: {
      create: {
        synopsis: '--name NAME',
        summary: 'create a key; it is printed once, store it',
        example: 'callwright keys create --name production --json',
      },
      list: { synopsis: '', summary: 'list the keys (prefix and last 4 only)' },
      revoke: { synopsis: 'KEY_ID', summary: 'revoke a key at once; the others keep working' },
    },
  },
  agents: {
    summary: 'voice agents that hold the calls',
    verbs: {
      create: {
        synopsis:
          '--name N --prompt TEXT [--first-message TEXT] [--variable SPEC]... [--script FILE] [--brain script|llm] [options]',
        summary: 'create an agent',
        details: [
          '--variable SPEC        NAME[:TYPE][!][=DEFAULT]: TYPE string|number|boolean|any, ! required',
          '--script FILE          a dialog script (JSON), e.g. examples/agents/appointment-confirmation.json',
          '--brain script|llm     script (default; offline) or llm (needs CALLWRIGHT_OPENAI_BASE_URL)',
          '--extract N:TYPE:DESC  a field of extracted_data (TYPE string|number|boolean|date)',
          '--settings JSON|@FILE  the voice settings: stt, llm, tts (with fallbacks) or realtime (docs/voice-providers.md)',
          '--max-duration S, --silence-timeout S, --voice VOICE, --llm-model M, --voicemail-message TEXT, --inactive',
        ],
        example:
          'callwright agents create --name Appointments --prompt "Confirm." --script examples/agents/appointment-confirmation.json --variable "customer_name!"',
      },
      update: {
        synopsis: 'AGENT_ID [the flags of create]',
        summary:
          'change what the flags give and keep the rest (--variable and --extract replace their lists)',
        details: [
          '--settings JSON|@FILE  replaces the settings; --voice, --llm-model, --voicemail-message change their part',
          '--brain llm            drops the script (unless --script is given too)',
        ],
        example: 'callwright agents update agt_… --variable "customer_name!" --variable party_size:number',
      },
      list: { synopsis: '', summary: 'list the agents' },
      show: {
        synopsis: 'AGENT_ID',
        summary: 'an agent: variables (type, required, default), script, settings',
      },
      activate: { synopsis: 'AGENT_ID', summary: 'let the agent take calls again' },
      deactivate: { synopsis: 'AGENT_ID', summary: 'refuse new calls for the agent (404)' },
    },
  },
  numbers: {
    summary: 'caller IDs (from_number) and their routes',
    verbs: {
      add: {
        synopsis: '+E164 [--route sandbox|TRUNK]',
        summary: 'add a caller ID, routed to the sandbox (default) or a trunk',
        example: 'callwright numbers add +15550009999',
      },
      list: { synopsis: '', summary: 'list the numbers' },
      remove: { synopsis: '+E164', summary: 'remove a number' },
    },
  },
  trunks: {
    summary: 'SIP trunks to real carriers',
    verbs: {
      add: {
        synopsis:
          '--name N --uri sip:HOST[:PORT][;transport=udp|tcp|tls] (or sips:HOST) [--username U --password P] [--from-domain D] [--tls-ca CA.pem] [--tls-insecure] [--symmetric-rtp] [--asserted-identity] [--privacy] [--register] [--outbound-proxy sip:PROXY[:PORT][;transport=…]] [--srtp off|optional|required] [--public-address IP]',
        summary:
          'add a trunk; its password is sealed and never shown again; sips: or transport=tls is TLS, checked against public CAs or --tls-ca; --symmetric-rtp answers RTP wherever it comes from (far end behind NAT); --asserted-identity sends P-Asserted-Identity, --privacy Privacy: id; --register keeps the trunk registered (trunks list shows the state); --outbound-proxy sends every request through that proxy; --srtp encrypts media (default: required on a TLS trunk, off otherwise); --public-address is the address this trunk’s calls advertise (a NAT toward this carrier only)',
        example: 'callwright trunks add --name carrier --uri sip:sip.example.net --username u --password p',
      },
      list: { synopsis: '', summary: 'list the trunks' },
      remove: { synopsis: 'TRUNK', summary: 'remove a trunk no number routes to' },
    },
  },
  calls: {
    summary: 'place, follow and end calls',
    verbs: {
      place: {
        synopsis:
          '--agent AGENT_ID --from +E164 --to +E164 [--first-message T] [--context T] [--var NAME=VALUE]...',
        summary: 'queue a call with the same checks as POST /v1/calls/outbound; a running `serve` dials it',
        example:
          'callwright calls place --agent agt_… --from +15550009999 --to +15550100001 --var customer_name=Ann',
      },
      list: {
        synopsis: '[--status S] [--limit N]',
        summary: 'the newest calls (default 20, at most 100)',
      },
      show: {
        synopsis: 'CALL_ID',
        summary: 'a call: outcome, timeline, transcript, extracted data, recording',
      },
      cancel: { synopsis: 'CALL_ID', summary: 'cancel a queued call or hang up a live one' },
    },
  },
  credentials: {
    summary: "the account's own voice-vendor keys (used before the service-wide ones)",
    verbs: {
      add: {
        synopsis: '--name N --provider deepgram|elevenlabs|cartesia|openai [--base-url URL]',
        summary: 'store a key, read from standard input; sealed, only its last 4 characters are shown',
        example: 'printf %s "$DEEPGRAM_KEY" | callwright credentials add --name dg --provider deepgram',
      },
      list: { synopsis: '', summary: 'list the keys (last 4 characters only)' },
      remove: { synopsis: 'NAME_OR_ID', summary: 'delete a key' },
      test: {
        synopsis: 'NAME_OR_ID',
        summary: "try a key with one cheap request to its vendor; the vendor's error and exit 1 when refused",
      },
    },
  },
  'calling-rules': {
    summary: 'how fast calls leave a caller ID or trunk, and the hours no call starts',
    verbs: {
      show: { synopsis: '', summary: 'the caps on calls per second and the quiet hours' },
      'dial-rate': {
        synopsis: '(--caller-id NUMBER | --trunk NAME) (--per-second N | --off)',
        summary: 'cap the calls per second of one caller ID or trunk (every call counts; the rest wait)',
        example: 'callwright calling-rules dial-rate --caller-id +15550009999 --per-second 2',
      },
      'quiet-hours': {
        synopsis: '(--start HH:MM --end HH:MM --time-zone ZONE | --off)',
        summary: "no call starts in these hours, local to the callee (the number's zone, else ZONE)",
      },
    },
  },
  'do-not-call': {
    summary: 'numbers the account never dials (calls to them end at once, undialled)',
    verbs: {
      add: { synopsis: 'NUMBER [--reason TEXT]', summary: 'put an E.164 number on the list' },
      import: {
        synopsis: '--csv FILE [--reason TEXT]',
        summary:
          'add the numbers of a CSV (number[,reason]); every row is checked first, one bad row adds nothing',
        example: 'callwright do-not-call import --csv opt-outs.csv',
      },
      list: { synopsis: '[--limit N] [--after NUMBER]', summary: 'the list, in number order' },
      remove: { synopsis: 'NUMBER', summary: 'take a number off the list' },
    },
  },
  campaigns: {
    summary: 'batch calling: contacts called within their local calling window, paced, with retries',
    verbs: {
      create: {
        synopsis:
          '--csv FILE --agent ID --from NUMBER [--from NUMBER…] --window HH:MM-HH:MM --time-zone ZONE [--weekdays 1-5] [--concurrency N] [--per-minute N] [--daily-attempts N] [--retry busy=30x3,no_answer=60x2] [--starts-at ISO] [--ends-at ISO] [--name TEXT] [--caller-id-selection round_robin|local_area_code] [--per-hour N] [--per-day N] [--holidays US,FR] [--holiday-dates 2026-12-24,12-31] [--caller-id-health window=20,min=10,share=0.5,rest=240] (CSV column priority: higher first)',
        summary:
          'a campaign from a CSV (header to_number[,first_message,context,time_zone,VARIABLE…]); every row is checked first, one bad row creates nothing',
        example:
          'callwright campaigns create --csv reminders.csv --agent agt_… --from +15550009999 --window 09:00-17:00 --weekdays 1-5 --time-zone America/New_York --retry busy=30x3',
      },
      list: { synopsis: '[--limit N]', summary: 'the campaigns, newest first, with their progress' },
      show: { synopsis: 'CAMPAIGN_ID', summary: 'one campaign and its progress' },
      edit: {
        synopsis:
          'CAMPAIGN_ID [--window HH:MM-HH:MM [--weekdays 1-5]] [--concurrency N] [--per-minute N] [--daily-attempts N] [--retry busy=30x3] [--from NUMBER…] [--caller-id-selection round_robin|local_area_code] [--ends-at ISO] [--name TEXT] [--per-hour N|none] [--per-day N|none] [--holidays US,FR|none] [--holiday-dates DATES|none] [--caller-id-health window=N,min=N,share=X,rest=MINUTES|default]',
        summary:
          'change a running or paused campaign; effective at the next claim, recorded in the audit log',
        example: 'callwright campaigns edit cmp_… --window 10:00-18:00 --per-minute 20',
      },
      contacts: {
        synopsis: 'CAMPAIGN_ID [--state STATE] [--limit N] [--after POSITION]',
        summary: 'its contacts in list order: state, attempts, next attempt and why each waits',
      },
      pause: { synopsis: 'CAMPAIGN_ID', summary: 'no new attempts until resumed' },
      resume: {
        synopsis: 'CAMPAIGN_ID',
        summary: "start attempts again (one paused because its key was revoked takes the command line's key)",
      },
      cancel: { synopsis: 'CAMPAIGN_ID', summary: 'no new attempts; queued calls are canceled' },
      results: {
        synopsis: 'CAMPAIGN_ID [--format csv|jsonl]',
        summary:
          'one row per contact (outcome, attempts, last call, extracted data, summary, success, cost) to standard output',
        example: 'callwright campaigns results cmp_… --format csv > results.csv',
      },
      figures: {
        synopsis: 'CAMPAIGN_ID',
        summary:
          'attempts, minutes, cost, answer, voicemail and success rates: overall, per caller ID, per local hour',
      },
      'add-contacts': {
        synopsis: 'CAMPAIGN_ID --csv FILE',
        summary: 'add contacts to a running or paused campaign, checked as at creation; audited',
        example: 'callwright campaigns add-contacts cmp_… --csv more.csv',
      },
      'remove-contacts': {
        synopsis: 'CAMPAIGN_ID [--id CONTACT_ID…] [--number NUMBER…]',
        summary: 'never dial these contacts (one on a call is not interrupted); audited',
      },
    },
  },
  privacy: {
    summary: 'data rules: how long transcripts and recordings are kept, erasing a number, the audit log',
    verbs: {
      'erase-number': {
        synopsis: 'NUMBER',
        summary:
          "erase the number's calls, transcripts, recordings, events and campaign contacts (refused while it is on a call); audited",
      },
      retention: {
        synopsis: '[--days N | --off]',
        summary: 'show or set the days a call keeps its transcript and recording after it ends',
      },
      audit: { synopsis: '[--limit N]', summary: 'what was erased, when and by whom (numbers masked)' },
    },
  },
  webhook: {
    summary: "the account's webhook endpoint",
    verbs: {
      set: { synopsis: 'URL', summary: 'set the endpoint; prints its signing secret' },
      show: { synopsis: '', summary: 'the endpoint and its state' },
      'rotate-secret': { synopsis: '', summary: 'a new signing secret; the old one is accepted for 24 h' },
      'set-events': {
        synopsis: 'TYPE[,TYPE…]',
        summary:
          'the events sent besides call.completed: call.ringing, call.answered, call.transferred, campaign.completed, campaign.paused, campaign.canceled, number.rested',
      },
      disable: { synopsis: '[--reason TEXT]', summary: 'stop deliveries (events are kept)' },
      enable: { synopsis: '', summary: 'deliver again, kept events included' },
    },
  },
  events: {
    summary: 'webhook events and their delivery attempts',
    verbs: {
      list: { synopsis: '[--limit N] [--cursor EVENT_ID]', summary: 'events, newest first' },
      show: { synopsis: 'EVENT_ID', summary: 'an event and each delivery attempt' },
      resend: { synopsis: 'EVENT_ID', summary: 'deliver an event once more' },
    },
  },
  test: {
    summary: 'agent tests: run scenario files against an agent of a running service, as sandbox calls',
    verbs: {
      '': {
        synopsis:
          '[FILE|FOLDER]... --agent AGENT_ID [--repeat N] [--junit FILE] [--timeout S] [--replay CALL_ID] [--agent-overrides JSON|FILE] [--from NUMBER] [--url URL] [--api-key KEY]',
        summary:
          'check each scenario file, run them all in parallel over the HTTP API and report: a table, each failure with its reasons and transcript, a summary; exit 0 when all pass, 1 when any fails or the run times out, 2 for bad input',
        details: [
          'FILE|FOLDER             scenario JSON files (docs/testing.md); a folder: every *.json in it, by name',
          '--agent AGENT_ID        the agent to test (required)',
          '--repeat N              run each scenario N times (1-20); the summary gives a pass rate per scenario',
          '--junit FILE            also write the results as JUnit XML, for CI',
          '--timeout S             stop waiting after S seconds (default 300): exit 1, the calls still running named',
          '--replay CALL_ID        instead of files: replay a completed call from its recording and show the diff turn by turn',
          '--agent-overrides JSON|FILE   {"prompt": …, "settings": {…}, "script": {…} or "FILE"} for this run only (the agent is not changed)',
          '--from NUMBER           a sandbox number of the account to call from (default: its first)',
          '--url URL               the service (default: CALLWRIGHT_URL, else http://127.0.0.1:3000)',
          '--api-key KEY           an API key of the account (default: CALLWRIGHT_API_KEY; prefer the variable)',
          '--json                  print the final report as JSON',
        ],
        example:
          'CALLWRIGHT_API_KEY=cw_live_… callwright test examples/scenarios/appointment --agent agt_… --junit results.xml',
      },
    },
  },
  users: {
    summary: 'people who sign in to the dashboard',
    verbs: {
      create: {
        synopsis: '--email EMAIL',
        summary: 'create a user; the password is read from stdin or a prompt',
        example: 'callwright users create --email ops@example.com',
      },
      list: { synopsis: '', summary: 'list the users of the account' },
      'reset-password': {
        synopsis: '--email EMAIL',
        summary: 'set a new password (stdin or prompt); the user is signed out everywhere',
      },
      remove: { synopsis: '--email EMAIL', summary: 'remove a user and end their sessions' },
      'setup-token': { synopsis: '', summary: 'a one-time token for the first sign-up in the dashboard' },
    },
  },
};

const globalOptions = `Global options:
  --json             print JSON: one object per command; lists as {"<things>": [...]}
  --account ID       act on this account (default: the default account)
  --help, -h         this text; \`callwright GROUP --help\` or \`callwright GROUP VERB --help\` for one command
  --version, -V      the version
Environment: see the README's Configuration section (CALLWRIGHT_DATA_DIR: where the database is)`;

function verbLine(group: string, verb: string, help: VerbHelp): string {
  const head = `  ${[group, verb, help.synopsis].filter((part) => part !== '').join(' ')}`;
  return `${head}\n      ${help.summary}`;
}

export function globalUsage(): string {
  const lines = ['Usage: callwright <command> [options]', ''];
  for (const [group, entry] of Object.entries(commandHelp)) {
    for (const [verb, help] of Object.entries(entry.verbs)) lines.push(verbLine(group, verb, help));
  }
  return `${lines.join('\n')}\n\n${globalOptions}\n`;
}

/** The help of a group, or of one of its verbs; null when there is no such command. */
export function commandUsage(group: string, verb: string | undefined): string | null {
  const entry = commandHelp[group];
  if (!entry) return null;
  const verbs =
    verb === undefined
      ? Object.entries(entry.verbs)
      : Object.entries(entry.verbs).filter(([name]) => name === verb);
  if (verbs.length === 0) return null;
  const lines = [`callwright ${group}: ${entry.summary}`, ''];
  for (const [name, help] of verbs) {
    lines.push(verbLine(group, name, help));
    for (const detail of help.details ?? []) lines.push(`      ${detail}`);
    if (help.example) lines.push(`      example: ${help.example}`);
  }
  return `${lines.join('\n')}\n\n${globalOptions}\n`;
}

/** The known name nearest to `typed` (at most 2 edits away), for "did you mean". */
export function nearestName(typed: string, names: string[]): string | null {
  let best: { name: string; distance: number } | null = null;
  for (const name of names) {
    const distance = editDistance(typed, name);
    if (distance <= 2 && (!best || distance < best.distance)) best = { name, distance };
  }
  return best?.name ?? null;
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j] as number;
      row[j] = Math.min(above + 1, (row[j - 1] as number) + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length] as number;
}
