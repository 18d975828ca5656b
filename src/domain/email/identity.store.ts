import { type EmailIdentity, Prisma, type SmtpCredential } from '../../generated/prisma/client.js';
import type { Database, Statement, Tx } from '../kernel/db.js';
import { keysetArgs } from '../paging.js';
import type { RowSelection } from './agent.store.js';

/*
 * The store of email identities and their SMTP submission credentials (issue 23): every Prisma call about them.
 * Functions take the client or transaction they run on (`Tx`) and plain parameters, and return rows; the row types
 * are re-exported here so services name them without importing Prisma.
 */

export type { EmailIdentity, SmtpCredential };

/** The account's identity (any status), or null. */
export function findIdentityRow(db: Tx, accountId: string, identityId: string): Promise<EmailIdentity | null> {
  return db.emailIdentity.findFirst({ where: { id: identityId, accountId } });
}

/** The identity by id (any account, any status), or null. */
export function identityById(db: Tx, identityId: string): Promise<EmailIdentity | null> {
  return db.emailIdentity.findUnique({ where: { id: identityId } });
}

/** The identity by id. @throws when there is none (Prisma's not-found error). */
export function identityByIdOrThrow(db: Tx, identityId: string): Promise<EmailIdentity> {
  return db.emailIdentity.findUniqueOrThrow({ where: { id: identityId } });
}

/** The identity at `address` (lower-cased, exact), or null. */
export function identityByAddress(db: Tx, address: string): Promise<EmailIdentity | null> {
  return db.emailIdentity.findUnique({ where: { address } });
}

/** Who owns `address`, if an identity does: its id, account and agent (one index read). */
export function identityOwnerOf(
  db: Tx,
  address: string,
): Promise<Pick<EmailIdentity, 'id' | 'accountId' | 'agentId'> | null> {
  return db.emailIdentity.findUnique({ where: { address }, select: { id: true, accountId: true, agentId: true } });
}

/** Every column of an identity row, aliased to its field name (what a Prisma row holds). */
const IDENTITY_SELECT = `SELECT id, account_id AS "accountId", address, local_part AS "localPart", domain,
  display_name AS "displayName", agent_id AS "agentId", status, reply_mode AS "replyMode", created_at AS "createdAt",
  deprovisioned_at AS "deprovisionedAt" FROM email_identities`;

const ACTIVE_AT: Statement = {
  name: 'email_identities_active_at',
  text: `${IDENTITY_SELECT} WHERE address = ANY($1::text[]) AND status = 'active'`,
};

/**
 * Active identities at `addresses` (already lower-cased and hosted here). A prepared read below Prisma (issue 24):
 * every inbound message asks it at RCPT and again at the end of DATA.
 */
export function activeIdentitiesAt(
  ctx: { database: Pick<Database, 'read'> },
  addresses: string[],
): Promise<EmailIdentity[]> {
  return ctx.database.read<EmailIdentity>(ACTIVE_AT, [addresses]);
}

/** What RCPT TO needs of a recipient (see {@link rcptIdentityAt}): the active identity and the block-list verdict. */
export interface RcptIdentity {
  identity: EmailIdentity;
  /** An `inbound` block-list entry of the identity's account (account-wide or its own) matches the sender. */
  blocked: boolean;
}

/**
 * The block-list test of a recipient identity `i` against `entries` (an SQL text[]): an `inbound` entry of its
 * account, account-wide or the identity's own, equals one of them (see {@link rcptIdentityAt}). The one text of the
 * rule for RCPT's read, the delivery's read and the one-statement delivery's precondition.
 */
const blockedBy = (entries: Prisma.Sql): Prisma.Sql => Prisma.sql`EXISTS (SELECT 1 FROM email_blocklist b
      WHERE b.account_id = i.account_id AND b.direction = 'inbound' AND b.entry = ANY(${entries})
      AND (b.identity_id IS NULL OR b.identity_id = i.id))`;

/** An identity row `i` (fields as a Prisma row names them) and `blocked`, its block-list test against `$2`. */
const IDENTITY_BLOCKED_SELECT = `SELECT i.id, i.account_id AS "accountId", i.address, i.local_part AS "localPart",
    i.domain, i.display_name AS "displayName", i.agent_id AS "agentId", i.status, i.reply_mode AS "replyMode",
    i.created_at AS "createdAt", i.deprovisioned_at AS "deprovisionedAt",
    (cardinality($2::text[]) > 0 AND ${blockedBy(Prisma.raw('$2::text[]')).text}) AS blocked
    FROM email_identities i`;

const RCPT_AT: Statement = {
  name: 'email_identities_rcpt_at',
  text: `${IDENTITY_BLOCKED_SELECT} WHERE i.address = $1 AND i.status = 'active'`,
};

/**
 * RCPT TO in ONE prepared read (issue 24; it was two): the active identity at `address` (lower-cased, hosted here)
 * and whether an `inbound` block-list entry of its account, account-wide or the identity's own, equals one of
 * `senderEntries` (the sender's address, its domain and parent domains; empty for the null sender: never blocked).
 * @returns null when no active identity has the address.
 */
export async function rcptIdentityAt(
  ctx: { database: Pick<Database, 'read'> },
  address: string,
  senderEntries: string[],
): Promise<RcptIdentity | null> {
  const [row] = await ctx.database.read<EmailIdentity & { blocked: boolean }>(RCPT_AT, [address, senderEntries]);
  if (!row) return null;
  const { blocked, ...identity } = row;
  return { identity, blocked: blocked === true };
}

const DELIVERABLE_AT: Statement = {
  name: 'email_identities_deliverable_at',
  text: `${IDENTITY_BLOCKED_SELECT} WHERE i.address = ANY($1::text[]) AND i.status = 'active'`,
};

/**
 * The active identities at `addresses` (lower-cased, hosted here) as the end of DATA sees them (issue 24), split by
 * the same block-list test as RCPT TO ({@link rcptIdentityAt}; `senderEntries` empty for the null sender): one
 * prepared read. The delivery re-checks here because RCPT's answer may come from the per-instance cache
 * (inbound.service.ts `RCPT_CACHE_TTL_MS`), so a block added since is still honoured.
 */
export async function deliverableIdentitiesAt(
  ctx: { database: Pick<Database, 'read'> },
  addresses: string[],
  senderEntries: string[],
): Promise<{ identities: EmailIdentity[]; blocked: EmailIdentity[] }> {
  const rows = await ctx.database.read<EmailIdentity & { blocked: boolean }>(DELIVERABLE_AT, [
    addresses,
    senderEntries,
  ]);
  const out = { identities: [] as EmailIdentity[], blocked: [] as EmailIdentity[] };
  for (const { blocked, ...identity } of rows) (blocked === true ? out.blocked : out.identities).push(identity);
  return out;
}

/**
 * Precondition of a single-statement inbound delivery (EventLog.write `precondition`) to an identity the RCPT
 * command found: it is still active, still has no agent (the one-statement path writes no agent job), and, when
 * `senderEntries` is not empty (the sender's address, domain and parent domains; empty for the null sender), no
 * `inbound` block-list entry of its account (account-wide or its own) equals one of them. So a mailbox
 * deprovisioned or given an agent, or a sender blocked, between RCPT (possibly answered from the per-instance RCPT
 * cache) and the end of DATA is never written by that path.
 */
export function identityStillPlainSql(identityId: string, senderEntries: readonly string[]): Prisma.Sql {
  const notBlocked =
    senderEntries.length > 0
      ? Prisma.sql` AND NOT ${blockedBy(Prisma.sql`${[...senderEntries]}::text[]`)}`
      : Prisma.empty;
  return Prisma.sql`EXISTS (SELECT 1 FROM email_identities i WHERE i.id = ${identityId} AND i.status = 'active'
    AND i.agent_id IS NULL${notBlocked})`;
}

/** Inserts an identity. @throws Prisma P2002 when the address is taken meanwhile. */
export function insertIdentity(
  tx: Tx,
  data: Pick<
    EmailIdentity,
    | 'id'
    | 'accountId'
    | 'address'
    | 'localPart'
    | 'domain'
    | 'displayName'
    | 'agentId'
    | 'replyMode'
    | 'status'
    | 'createdAt'
  >,
): Promise<EmailIdentity> {
  return tx.emailIdentity.create({ data });
}

/** The account's identities (any status), oldest first, with the adapter's `selection` (none: plain rows). */
export function identitiesOf(db: Tx, accountId: string, selection: RowSelection = {}): Promise<EmailIdentity[]> {
  return db.emailIdentity.findMany({
    ...selection,
    where: { accountId },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  }) as Promise<EmailIdentity[]>;
}

/**
 * One keyset page of the account's identities (any status) in id order (uuidv7: creation order): after the id
 * `after`, at most `take` rows.
 */
export function identityPage(
  db: Tx,
  accountId: string,
  after: string | undefined,
  take: number,
): Promise<EmailIdentity[]> {
  const k = keysetArgs('id', { after, limit: take });
  return db.emailIdentity.findMany({ where: { accountId, ...k.where }, orderBy: k.orderBy, take });
}

/** The account's identity with the adapter's `selection`, or null. */
export function identityRowSelected(
  db: Tx,
  accountId: string,
  identityId: string,
  selection: RowSelection,
): Promise<EmailIdentity | null> {
  return db.emailIdentity.findFirst({
    ...selection,
    where: { id: identityId, accountId },
  }) as Promise<EmailIdentity | null>;
}

/** Identities of the account among `ids` (any order). */
export function identitiesByIds(db: Tx, accountId: string, ids: readonly string[]): Promise<EmailIdentity[]> {
  return db.emailIdentity.findMany({ where: { id: { in: [...ids] }, accountId } });
}

/** How many identities the account has, any status. */
export function countIdentitiesOf(db: Tx, accountId: string): Promise<number> {
  return db.emailIdentity.count({ where: { accountId } });
}

/** How many active identities the agent is assigned to. */
export function countActiveIdentitiesOfAgent(db: Tx, agentId: string): Promise<number> {
  return db.emailIdentity.count({ where: { agentId, status: 'active' } });
}

/** How many active identities live on `domain`. */
export function countActiveIdentitiesOnDomain(db: Tx, domain: string): Promise<number> {
  return db.emailIdentity.count({ where: { domain, status: 'active' } });
}

/** Writes displayName/agentId (absent keeps, null clears). */
export function updateIdentityRow(
  tx: Tx,
  identityId: string,
  data: { displayName?: string | null; agentId?: string | null },
): Promise<EmailIdentity> {
  return tx.emailIdentity.update({ where: { id: identityId }, data });
}

/** Moves an active identity to `deprovisioning` at `at`. @returns whether this call moved it (1) or not (0). */
export async function markDeprovisioning(tx: Tx, identityId: string, at: Date): Promise<number> {
  const { count } = await tx.emailIdentity.updateMany({
    where: { id: identityId, status: 'active' },
    data: { status: 'deprovisioning', deprovisionedAt: at },
  });
  return count;
}

/** Deletes identities deprovisioned before `before`, with their threads (foreign keys). @returns how many. */
export async function purgeDeprovisioned(db: Tx, before: Date): Promise<number> {
  const { count } = await db.emailIdentity.deleteMany({
    where: { status: 'deprovisioning', deprovisionedAt: { lt: before } },
  });
  return count;
}

/** Writes the identity's SMTP password hash, replacing any earlier one. */
export async function saveSmtpCredential(
  db: Tx,
  c: { identityId: string; accountId: string; passwordHash: string; createdAt: Date },
): Promise<void> {
  await db.smtpCredential.upsert({
    where: { identityId: c.identityId },
    create: c,
    update: { passwordHash: c.passwordHash, createdAt: c.createdAt },
  });
}

/** The identity's current SMTP credential, or null. */
export function smtpCredentialOf(db: Tx, identityId: string): Promise<SmtpCredential | null> {
  return db.smtpCredential.findUnique({ where: { identityId } });
}
