import type { AuditRow, TaskHold, TimelineEntry } from '../api/types';
import { orgOfHandle } from './roles';

/** The actor the admin API records for the admin token itself (a bearer call). */
const ADMIN_TOKEN_ACTOR = 'admin token';
/** The actor of a console session signed in with the admin token: `console:<session id>`. */
const CONSOLE_SESSION = /^console:(.+)$/;

/**
 * Who an actor the relay recorded is, in words: a person's email (or OIDC subject) as it is, the
 * admin token and its console sessions named as such, and null or `relay` as the relay itself.
 */
export function actorText(actor: string | null): string {
  if (actor === null || actor === 'relay') return 'the relay';
  if (actor === ADMIN_TOKEN_ACTOR) return 'the admin token';
  const session = CONSOLE_SESSION.exec(actor);
  return session ? `the admin token (console session ${session[1]})` : actor;
}

/** The parties of a held handoff and its hold. */
export interface HeldParties {
  hold: TaskHold;
  sender: string;
  recipient: string;
}

/** Who held the handoff and why, said so that nobody reads the sender as the one who held it. */
export function heldByText({ hold, sender, recipient }: HeldParties): string {
  return `The relay held it under the rule "${hold.rule}" of ${recipient}'s trust policy; ${sender} sent it.`;
}

/** Who may approve or deny the hold, as the relay enforces it: the recipient's org decides, its rule held it. */
export function whoMayDecideText({ hold, sender, recipient }: HeldParties): string {
  const people = `A person with the approver role (or operator or admin) in ${orgOfHandle(recipient)} or relay-wide`;
  return hold.four_eyes
    ? `${people}, signed in to the console as themselves (not with the admin token) and not the owner of ${sender} (four eyes).`
    : `${people}.`;
}

const DECISION_TITLES = { approved: 'Approved and delivered', denied: 'Denied', expired: 'Expired' } as const;
/** The event of the hold's end: an approval delivers the handoff (`created`), a deny or the deadline rejects it. */
const DECISION_EVENTS = { approved: 'created', denied: 'rejected', expired: 'rejected' } as const;

/** What the timeline says of an event of a held handoff, in place of its bare event name and actor. */
export interface HoldNote {
  title: string;
  by: string;
  lines: string[];
}

/**
 * The timeline's notes on a held handoff's events: its `held` event is the relay's (under the
 * recipient's rule, sent by the sender), and the event that ended the hold says who decided it,
 * under which rule, and with what comment. Keyed by the entries' positions.
 */
export function holdNotes(entries: TimelineEntry[], parties: HeldParties | null): Map<string, HoldNote> {
  const notes = new Map<string, HoldNote>();
  if (!parties) return notes;
  const { hold, recipient } = parties;
  const heldAt = entries.findIndex((entry) => entry.event === 'held');
  if (heldAt < 0) return notes;
  notes.set(entries[heldAt].position, {
    title: 'Held for approval',
    by: 'the relay',
    lines: [heldByText(parties), `Who may decide: ${whoMayDecideText(parties)}`],
  });
  const outcome = hold.outcome;
  if (outcome === 'held' || outcome === 'cancelled') return notes;
  const ended = entries.slice(heldAt + 1).find((entry) => entry.event === DECISION_EVENTS[outcome]);
  if (!ended) return notes;
  const rule = `Under the rule "${hold.rule}" of ${recipient}'s trust policy.`;
  if (outcome === 'expired') {
    notes.set(ended.position, { title: DECISION_TITLES.expired, by: 'the relay', lines: [`${rule} Nobody decided before the deadline.`] });
    return notes;
  }
  const lines = [rule, hold.comment ? `Comment: ${hold.comment}` : 'No comment.'];
  if (outcome === 'approved') lines.push(`Delivered to ${recipient} as if just sent.`);
  notes.set(ended.position, { title: DECISION_TITLES[outcome], by: actorText(ended.actor), lines });
  return notes;
}

/** Who ended the hold, from the task's audit rows (the approve, deny or expire out of `held`), in words; null while it is held. */
export function holdDecider(audit: AuditRow[]): string | null {
  const row = audit.find((entry) => entry.from_state === 'held' && ['approve', 'deny', 'expire'].includes(entry.action));
  return row ? actorText(row.actor) : null;
}

/** A task's hold with its parties, or null for a task that was never held. */
export function heldPartiesOf(task: { hold: TaskHold | null; sender: { handle: string }; recipient: { handle: string } }): HeldParties | null {
  return task.hold ? { hold: task.hold, sender: task.sender.handle, recipient: task.recipient.handle } : null;
}
