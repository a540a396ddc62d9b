import { AppError } from './errors.js';

/**
 * What a call used of each vendor, and what that cost: each adapter reports usage in the vendor's
 * own billing unit, a price table (the service's defaults, overridden per account) turns it into
 * money. Pure: no I/O, no clock.
 */

export const usageStages = ['stt', 'llm', 'tts', 'realtime', 'telephony'] as const;
export type UsageStage = (typeof usageStages)[number];

export const usageUnits = [
  'audio_seconds',
  'characters',
  'input_tokens',
  'output_tokens',
  'input_audio_tokens',
  'output_audio_tokens',
  'minutes',
] as const;
export type UsageUnit = (typeof usageUnits)[number];

export interface UsageEntry {
  stage: UsageStage;
  provider: string;
  /** The model (or, for telephony, the trunk) when it matters for the price. */
  model: string | null;
  unit: UsageUnit;
  quantity: number;
}

/** A price: US dollars per `per` units; `model: null` prices every model of the provider. */
export interface Price {
  stage: UsageStage;
  provider: string;
  model: string | null;
  unit: UsageUnit;
  usd: number;
  per: number;
}

/**
 * The service's default prices: vendors' public list prices for pay-as-you-go API use as published
 * on 2026-11-25 (an account's own contract is usually different: override them in the dashboard).
 * Offline engines and the sandbox cost nothing; a trunk's minutes are priced only once an account
 * sets its rate.
 */
export const defaultPricesDate = '2026-11-25';
export const defaultPrices: readonly Price[] = [
  { stage: 'stt', provider: 'pocketsphinx', model: null, unit: 'audio_seconds', usd: 0, per: 60 },
  { stage: 'stt', provider: 'deepgram', model: null, unit: 'audio_seconds', usd: 0.0077, per: 60 },
  { stage: 'stt', provider: 'openai', model: null, unit: 'audio_seconds', usd: 0.006, per: 60 },
  { stage: 'tts', provider: 'flite', model: null, unit: 'characters', usd: 0, per: 1000 },
  { stage: 'tts', provider: 'elevenlabs', model: null, unit: 'characters', usd: 0.05, per: 1000 },
  { stage: 'tts', provider: 'cartesia', model: null, unit: 'characters', usd: 0.04, per: 1000 },
  { stage: 'tts', provider: 'openai', model: null, unit: 'characters', usd: 0.015, per: 1000 },
  { stage: 'tts', provider: 'deepgram', model: null, unit: 'characters', usd: 0.03, per: 1000 },
  { stage: 'llm', provider: 'openai', model: null, unit: 'input_tokens', usd: 0.15, per: 1_000_000 },
  { stage: 'llm', provider: 'openai', model: null, unit: 'output_tokens', usd: 0.6, per: 1_000_000 },
  { stage: 'realtime', provider: 'openai', model: null, unit: 'input_tokens', usd: 4, per: 1_000_000 },
  { stage: 'realtime', provider: 'openai', model: null, unit: 'output_tokens', usd: 16, per: 1_000_000 },
  { stage: 'realtime', provider: 'openai', model: null, unit: 'input_audio_tokens', usd: 32, per: 1_000_000 },
  {
    stage: 'realtime',
    provider: 'openai',
    model: null,
    unit: 'output_audio_tokens',
    usd: 64,
    per: 1_000_000,
  },
  { stage: 'telephony', provider: 'sandbox', model: null, unit: 'minutes', usd: 0, per: 1 },
];

/** A call's usage as it accumulates: one entry per stage, provider, model and unit. */
export class UsageMeter {
  readonly #entries = new Map<string, UsageEntry>();

  add(stage: UsageStage, provider: string, model: string | null, unit: UsageUnit, quantity: number): void {
    if (!Number.isFinite(quantity) || quantity <= 0) return;
    const key = `${stage}\u0000${provider}\u0000${model ?? ''}\u0000${unit}`;
    const entry = this.#entries.get(key);
    if (entry) entry.quantity += quantity;
    else this.#entries.set(key, { stage, provider, model, unit, quantity });
  }

  entries(): UsageEntry[] {
    return [...this.#entries.values()].map((entry) => ({ ...entry }));
  }
}

export interface CostLine {
  stage: UsageStage;
  provider: string;
  model: string | null;
  unit: UsageUnit;
  quantity: number;
  /** Null when no price covers it (listed, not guessed). */
  usd: number | null;
}

export interface CallCost {
  currency: 'USD';
  total_usd: number;
  by_stage: Partial<Record<UsageStage, number>>;
  lines: CostLine[];
  prices_as_of: string;
}

/** The price for a usage entry: the account's exact model, then its any-model, then the defaults'. */
function priceFor(entry: UsageEntry, tables: readonly (readonly Price[])[]): Price | null {
  for (const table of tables) {
    const candidates = table.filter(
      (price) =>
        price.stage === entry.stage && price.provider === entry.provider && price.unit === entry.unit,
    );
    const exact = candidates.find((price) => price.model !== null && price.model === entry.model);
    const general = candidates.find((price) => price.model === null);
    if (exact ?? general) return (exact ?? general) as Price;
  }
  return null;
}

const roundUsd = (usd: number) => Math.round(usd * 1e6) / 1e6;

/** Prices a call's usage: the account's prices first, then the defaults. */
export function costOf(usage: readonly UsageEntry[], accountPrices: readonly Price[] = []): CallCost {
  const byStage: Partial<Record<UsageStage, number>> = {};
  let total = 0;
  const lines = usage.map((entry): CostLine => {
    const price = priceFor(entry, [accountPrices, defaultPrices]);
    const usd = price ? roundUsd((entry.quantity / price.per) * price.usd) : null;
    if (usd !== null) {
      total += usd;
      byStage[entry.stage] = roundUsd((byStage[entry.stage] ?? 0) + usd);
    }
    return { ...entry, quantity: Math.round(entry.quantity * 1000) / 1000, usd };
  });
  return {
    currency: 'USD',
    total_usd: roundUsd(total),
    by_stage: byStage,
    lines,
    prices_as_of: defaultPricesDate,
  };
}

export const priceLimits = { pricesMax: 100, nameMaxChars: 100 } as const;

/** Checks an account's price table as it is saved; a 400 naming the first bad entry. */
export function checkPrices(raw: unknown): Price[] {
  if (!Array.isArray(raw)) throw new AppError('validation_error', 'prices must be a JSON list');
  if (raw.length > priceLimits.pricesMax)
    throw new AppError('validation_error', `at most ${priceLimits.pricesMax} prices`);
  return raw.map((entry, index) => {
    const at = `prices[${index}]`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry))
      throw new AppError('validation_error', `${at} must be an object`);
    const { stage, provider, model = null, unit, usd, per = 1, ...rest } = entry as Record<string, unknown>;
    const extra = Object.keys(rest)[0];
    if (extra !== undefined)
      throw new AppError('validation_error', `${at}.${extra.slice(0, 40)} is not a field`);
    if (!(usageStages as readonly unknown[]).includes(stage))
      throw new AppError('validation_error', `${at}.stage must be one of ${usageStages.join(', ')}`);
    if (!(usageUnits as readonly unknown[]).includes(unit))
      throw new AppError('validation_error', `${at}.unit must be one of ${usageUnits.join(', ')}`);
    for (const [name, value] of [
      ['provider', provider],
      ['model', model ?? 'any'],
    ] as const) {
      if (typeof value !== 'string' || value === '' || value.length > priceLimits.nameMaxChars)
        throw new AppError(
          'validation_error',
          `${at}.${name} must be a text of 1 to ${priceLimits.nameMaxChars} characters`,
        );
    }
    if (typeof usd !== 'number' || !Number.isFinite(usd) || usd < 0 || usd > 1_000_000)
      throw new AppError('validation_error', `${at}.usd must be a number from 0 to 1000000`);
    if (typeof per !== 'number' || !Number.isFinite(per) || per <= 0 || per > 1e9)
      throw new AppError('validation_error', `${at}.per must be a positive number`);
    return {
      stage: stage as UsageStage,
      provider: provider as string,
      model: model as string | null,
      unit: unit as UsageUnit,
      usd,
      per,
    };
  });
}
