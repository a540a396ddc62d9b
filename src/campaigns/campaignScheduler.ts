import { nextWindowOpening } from '../domain/callingWindow.js';
import { localHourOf } from '../domain/campaignFigures.js';
import { hasHolidays } from '../domain/campaignRules.js';
import {
  type AttemptOutcome,
  attemptOutcomeOf,
  attemptOutcomes,
  type CampaignContactRecord,
  type CampaignRecord,
  callerIdFor,
  nextAfterAttempt,
} from '../domain/campaigns.js';
import { newId } from '../domain/ids.js';
import type { Logger } from '../logger.js';
import type { Store } from '../store/types.js';
import { StatusEventWriter } from '../webhooks/statusEventWriter.js';
import { announceNumberRested, callerIdRotation } from './callerIdRotation.js';
import { campaignCapWait } from './campaignCaps.js';
import { announceCampaignChange, describeCampaign } from './campaignControl.js';
import { nextOpeningPastHolidays } from './holidays.js';

export interface CampaignSchedulerOptions {
  store: Store;
  logger: Logger;
  /** A hint to the call dispatcher that a call was queued. */
  wakeDispatcher: () => void;
  /** How often running campaigns are looked at when nothing wakes the scheduler. */
  tickMs?: number;
  /** How long a claimed contact may be without its call before another scheduler writes it. */
  claimGraceMs?: number;
  /** The scheduler's clock (tests move it forward to reach retries and windows). */
  nowMs?: () => number;
}

/** The span of the daily cap on calls to one number (and of the campaign's daily cap). */
const dayMs = 86_400_000;
/** The span of the campaign's hourly cap. */
const hourMs = 3_600_000;
/** Whether an instant is at or after the campaign's end (a campaign without one never ends). */
function pastEnd(campaign: CampaignRecord, atMs: number): boolean {
  return campaign.endsAt !== null && atMs >= Date.parse(campaign.endsAt);
}

/** How often, and how far back, completions without their event are looked for. */
const missedCompletionsCheckMs = 60_000;
const missedCompletionsWindowMs = 10 * 60_000;

/** Contacts looked at per campaign and tick, at most: a tick's cost follows the calls due, not the list. */
const dueContactsPerTick = 50;

/**
 * Starts campaign attempts when they are due, inside the contact's calling window, within the
 * campaign's concurrency and pace; settles each attempt when its call ends (retry or done). Every
 * decision is a conditional write, so several schedulers (processes) may run at once: a contact is
 * claimed by one of them, and the concurrency cap and pace are checked in the claim's statement.
 */
export class CampaignScheduler {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = true;
  private readonly tickMs: number;
  private readonly claimGraceMs: number;
  private readonly nowMs: () => number;
  private readonly statusEvents: StatusEventWriter;
  private completionsCheckedAtMs = 0;

  constructor(private readonly options: CampaignSchedulerOptions) {
    this.statusEvents = new StatusEventWriter(options.store.events, options.logger);
    this.tickMs = options.tickMs ?? 500;
    this.claimGraceMs = options.claimGraceMs ?? 30_000;
    this.nowMs = options.nowMs ?? Date.now;
  }

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  /** Look now (a campaign was created or resumed, a call ended). */
  wake(): void {
    if (this.stopped) return;
    if (this.running) this.again = true;
    else this.schedule(0);
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), delayMs);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    if (this.running) return;
    let nextMs = this.tickMs;
    this.running = (async () => {
      do {
        this.again = false;
        try {
          for (const campaign of await this.options.store.campaigns.listActive()) {
            nextMs = Math.min(nextMs, await this.runCampaign(campaign));
          }
          await this.announceMissedCompletions();
        } catch (error) {
          this.options.logger.error({ err: error }, 'campaign scheduling failed; trying again');
        }
      } while (this.again && !this.stopped);
    })();
    await this.running;
    this.running = null;
    this.schedule(Math.max(1, nextMs));
  }

  /** One campaign's turn; resolves to how soon it wants the next one (ms). */
  async runCampaign(campaign: CampaignRecord): Promise<number> {
    const { store } = this.options;
    const nowMs = this.nowMs();
    await this.settleEndedAttempts(campaign, nowMs);
    await this.writeLostCalls(campaign, nowMs);
    if (campaign.status !== 'running') return this.tickMs;
    if (campaign.endsAt && Date.parse(campaign.endsAt) <= nowMs) {
      await store.campaigns.endWaiting(campaign.id, 'expired', new Date(nowMs).toISOString());
    }
    const atIso = new Date(nowMs).toISOString();
    if (await store.campaigns.complete(campaign.id, atIso)) {
      this.options.logger.info({ campaignId: campaign.id }, 'campaign completed');
      await this.announceCompletion({ ...campaign, status: 'completed', completedAt: atIso });
      return this.tickMs;
    }
    if (campaign.startsAt && Date.parse(campaign.startsAt) > nowMs) return this.tickMs;
    return this.startDueAttempts(campaign, nowMs);
  }

  /**
   * Now and then, the completions whose process died between marking the campaign completed and
   * writing its event: completed between 30 s (the completing process had its chance) and 10 min
   * ago, with no event though the endpoint asks for one. The store writes each once.
   */
  private async announceMissedCompletions(): Promise<void> {
    const nowMs = this.nowMs();
    if (nowMs - this.completionsCheckedAtMs < missedCompletionsCheckMs) return;
    this.completionsCheckedAtMs = nowMs;
    const missed = await this.options.store.campaigns.completedWithoutEvent(
      new Date(nowMs - missedCompletionsWindowMs).toISOString(),
      new Date(nowMs - this.claimGraceMs).toISOString(),
      20,
    );
    for (const campaign of missed) await this.announceCompletion(campaign);
  }

  /**
   * `campaign.completed`, with the campaign as GET /v1/campaigns/{id} shows it. Written by the
   * scheduler whose conditional update completed the campaign (one of them, whatever the number).
   */
  private async announceCompletion(campaign: CampaignRecord): Promise<void> {
    const progress = await this.options.store.campaigns.progress(campaign.id);
    await this.statusEvents.write(
      campaign.accountId,
      'campaign.completed',
      { campaignId: campaign.id },
      (event) => ({
        type: 'campaign.completed',
        id: event.id,
        created_at: event.createdAt,
        data: describeCampaign(campaign, progress),
      }),
    );
  }

  private async settleEndedAttempts(campaign: CampaignRecord, nowMs: number): Promise<void> {
    const { campaigns } = this.options.store;
    const atIso = new Date(nowMs).toISOString();
    for (const { contact, call } of await campaigns.endedAttempts(campaign.id, 500)) {
      const outcome = attemptOutcomeOf(call);
      const next = nextAfterAttempt(outcome, contact.attempts, campaign.retry, nowMs);
      const recorded = (attemptOutcomes as readonly string[]).includes(outcome)
        ? (outcome as AttemptOutcome)
        : null;
      // A callback the callee asked for is the next attempt, whatever the retry rules say.
      if (
        contact.callbackAt !== null &&
        campaign.status !== 'canceled' &&
        !pastEnd(campaign, Date.parse(contact.callbackAt)) &&
        (await this.options.store.campaignRules.settleWithCallback(contact, recorded, atIso))
      )
        continue;
      const retryAtMs = next.state === 'retry_wait' ? next.retryAtMs : null;
      // A retry that could only start after the campaign's end will never be made; a canceled
      // campaign makes none.
      const state =
        retryAtMs !== null && campaign.status === 'canceled'
          ? 'canceled'
          : retryAtMs !== null && pastEnd(campaign, retryAtMs)
            ? 'expired'
            : next.state;
      const dueAtIso =
        state === 'retry_wait' && retryAtMs !== null ? new Date(retryAtMs).toISOString() : null;
      await campaigns.settle(contact, { state, dueAtIso, outcome: recorded }, atIso);
    }
  }

  /** Claims whose scheduler died before writing the call: the call is written now, under the claim's id. */
  private async writeLostCalls(campaign: CampaignRecord, nowMs: number): Promise<void> {
    const before = new Date(nowMs - this.claimGraceMs).toISOString();
    if (campaign.status === 'paused') return;
    for (const contact of await this.options.store.campaigns.claimsWithoutCall(campaign.id, before)) {
      if (!contact.callId) continue;
      if (campaign.status === 'canceled') {
        await this.options.store.campaigns.settle(
          contact,
          { state: 'canceled', dueAtIso: null, outcome: null },
          new Date(nowMs).toISOString(),
        );
        continue;
      }
      this.options.logger.warn(
        { campaignId: campaign.id, contactId: contact.id },
        'writing the call of a lost claim',
      );
      // As it was before its claim: the attempt not yet counted (its earlier call id is not kept).
      const beforeClaim = { ...contact, attempts: contact.attempts - 1, callId: null };
      await this.placeAttempt(campaign, beforeClaim, contact.callId).catch((error: unknown) => {
        // Another scheduler wrote it first (the call id is the primary key): nothing to do.
        this.options.logger.debug(
          { err: error, contactId: contact.id },
          'the lost claim was written elsewhere',
        );
      });
    }
  }

  private async startDueAttempts(campaign: CampaignRecord, nowMs: number): Promise<number> {
    const { campaigns } = this.options.store;
    const spacingMs = Math.ceil(60_000 / campaign.callsPerMinute);
    const free = campaign.maxConcurrency - (await campaigns.countCalling(campaign.id));
    if (free <= 0) return this.tickMs;
    const latest = await campaigns.latestClaimAt(campaign.id);
    const latestMs = latest === null ? null : Date.parse(latest);
    if (latestMs !== null && nowMs - latestMs < spacingMs) return latestMs + spacingMs - nowMs;
    // The start takes the pace's next slot, not the moment the scheduler got to it: a scheduler a
    // few ms late each time still keeps the configured pace. A slot never lies more than one
    // spacing back, so a late scheduler catches up by one start at most.
    const slotMs = latestMs === null ? nowMs : Math.max(latestMs + spacingMs, nowMs - spacingMs);
    // The campaign's caps per hour and day: nothing starts before a place frees up.
    const capWait = await campaignCapWait(this.options.store, campaign, nowMs);
    if (capWait) return Math.min(capWait.untilMs - nowMs, this.tickMs * 20);
    const nowIso = new Date(nowMs).toISOString();
    for (const contact of await campaigns.dueContacts(campaign.id, nowIso, dueContactsPerTick)) {
      if (!(await this.stillCallable(campaign, contact, nowMs))) continue;
      const callId = newId('call');
      const claimed = await campaigns.claimContact(campaign, contact, {
        callId,
        nowIso,
        claimedAtIso: new Date(slotMs).toISOString(),
        spacingSinceIso: new Date(nowMs - spacingMs).toISOString(),
        dayAgoIso: new Date(nowMs - dayMs).toISOString(),
        hourAgoIso: new Date(nowMs - hourMs).toISOString(),
      });
      // Refused: the cap or the pace was reached (perhaps by another scheduler), or it was taken.
      if (!claimed) return this.tickMs;
      await this.placeAttempt(campaign, contact, callId);
      // One start per spacing: the next one is due when the pace allows.
      return slotMs + spacingMs - nowMs;
    }
    return this.tickMs;
  }

  /**
   * The checks before a claim that may move the contact instead: a suppressed number is never
   * called, and a contact outside its window waits for the next opening (or expires when that is
   * after the campaign's end). True when an attempt may start now.
   */
  private async stillCallable(
    campaign: CampaignRecord,
    contact: CampaignContactRecord,
    nowMs: number,
  ): Promise<boolean> {
    const { store } = this.options;
    const atIso = new Date(nowMs).toISOString();
    if (await store.doNotCall.get(campaign.accountId, contact.toNumber)) {
      await store.campaigns.updateWaiting(contact, { state: 'do_not_call', dueAtIso: null }, atIso);
      return false;
    }
    // The daily cap: the number waits until its oldest call of the last 24 h ages out.
    const recent = await store.campaigns.callsToNumberSince(
      campaign.accountId,
      contact.toNumber,
      new Date(nowMs - dayMs).toISOString(),
    );
    if (recent.count >= campaign.maxDailyAttempts && recent.oldestAt !== null) {
      await this.deferTo(campaign, contact, Date.parse(recent.oldestAt) + dayMs + 1_000, atIso);
      return false;
    }
    if (hasHolidays(campaign.rules.holidays)) return this.outsideHolidays(campaign, contact, nowMs);
    const opening = nextWindowOpening(campaign.callingWindow, contact.timeZones, nowMs);
    if (opening === nowMs) return true;
    if (opening === null || pastEnd(campaign, opening)) {
      await this.deferTo(campaign, contact, opening, atIso);
      return false;
    }
    // Every due contact held in the same zones waits for the same opening: one write moves them
    // all, so a shut window costs one statement, not a read of each contact behind it.
    await this.options.store.campaigns.deferZone(campaign.id, contact.timeZones, {
      nowIso: atIso,
      dueAtIso: new Date(opening).toISOString(),
      reason: 'window',
      window: campaign.callingWindow,
    });
    return false;
  }

  /**
   * With a holiday calendar: the window's next opening on a day that is no holiday where the callee
   * is (per contact: built-in holidays follow the number's country). True when that is now;
   * otherwise the contact waits for it, with the reason `holiday` when a holiday moved it.
   */
  private async outsideHolidays(
    campaign: CampaignRecord,
    contact: CampaignContactRecord,
    nowMs: number,
  ): Promise<boolean> {
    const { openingMs, holiday } = nextOpeningPastHolidays(
      campaign.callingWindow,
      campaign.rules.holidays,
      { zones: contact.timeZones, toNumber: contact.toNumber },
      nowMs,
    );
    if (openingMs === nowMs) return true;
    const atIso = new Date(nowMs).toISOString();
    const reason = holiday ? 'holiday' : 'window';
    if (
      openingMs !== null &&
      !pastEnd(campaign, openingMs) &&
      campaign.rules.holidays.countries.length === 0
    ) {
      // Custom dates only: every contact in the same zones waits for the same day, moved at once.
      await this.options.store.campaigns.deferZone(campaign.id, contact.timeZones, {
        nowIso: atIso,
        dueAtIso: new Date(openingMs).toISOString(),
        reason,
        window: campaign.callingWindow,
      });
      return false;
    }
    await this.deferTo(campaign, contact, openingMs, atIso, reason);
    return false;
  }

  /**
   * A waiting contact next due at `dueAtMs` (because of the daily cap, unless another reason is
   * given), or `expired` when that never comes before the end.
   */
  private async deferTo(
    campaign: CampaignRecord,
    contact: CampaignContactRecord,
    dueAtMs: number | null,
    atIso: string,
    reason: 'daily_cap' | 'holiday' | 'window' = 'daily_cap',
  ): Promise<void> {
    await this.options.store.campaigns.updateWaiting(
      contact,
      dueAtMs === null || pastEnd(campaign, dueAtMs)
        ? { state: 'expired', dueAtIso: null }
        : { state: contact.state, dueAtIso: new Date(dueAtMs).toISOString(), waitingReason: reason },
      atIso,
    );
  }

  /**
   * Records the attempt and queues its call (the claim already holds the contact; `contact` is as
   * it was before the claim).
   */
  private async placeAttempt(
    campaign: CampaignRecord,
    contact: CampaignContactRecord,
    callId: string,
  ): Promise<void> {
    const { store } = this.options;
    const attempt = contact.attempts + 1;
    // Real time, whatever the scheduler's clock: the dispatch job runs at the call's creation.
    const createdAt = new Date().toISOString();
    const rotation = await callerIdRotation(store, this.options.logger, campaign, this.nowMs(), (rested) =>
      announceNumberRested(store, this.options.logger, campaign.accountId, rested),
    );
    await store.campaigns.recordAttempt({
      callId,
      campaignId: campaign.id,
      contactId: contact.id,
      attempt,
      createdAt,
      localHour: localHourOf(contact.timeZones, Date.parse(createdAt)),
    });
    const call = await store.calls.createQueued({
      id: callId,
      accountId: campaign.accountId,
      agentId: campaign.agentId,
      apiKeyId: campaign.apiKeyId,
      fromNumber: callerIdFor(rotation, campaign.callerIdSelection, {
        position: contact.position,
        attempts: attempt - 1,
        toNumber: contact.toNumber,
      }),
      toNumber: contact.toNumber,
      firstMessage: contact.firstMessage,
      context: contact.context,
      variables: contact.variables,
      createdAt,
    });
    if (!call) {
      // The key the campaign's calls are placed under was revoked: nothing more is dialled under
      // it. The claim is undone (the contact waits again, its attempt not counted), and the pause
      // says why; a resume with a valid key places the calls under that key.
      await store.campaigns.releaseClaim(contact, callId, new Date(this.nowMs()).toISOString());
      if (await store.campaigns.setStatus(campaign.id, ['running'], 'paused', 'api_key_revoked')) {
        this.options.logger.warn(
          { campaignId: campaign.id },
          'the campaign key was revoked: the campaign is paused',
        );
        const paused = await store.campaigns.get(campaign.accountId, campaign.id);
        if (paused) await announceCampaignChange(store, this.options.logger, paused);
      }
      return;
    }
    this.options.wakeDispatcher();
  }
}
