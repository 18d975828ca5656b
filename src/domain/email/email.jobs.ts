/*
 * The job kinds of the email area as plain names (src/domain/kernel/jobs.ts; docs/jobs.md), in a file of their own
 * so the pipeline's files can name each other's queue without importing each other (inbound → agent → outbound).
 */

/** The job kind of agent answers in the job queue (src/infra/jobs; docs/jobs.md). */
export const AGENT_JOB = 'email-agent';
/** The job kind of outbound mail in the job queue (src/infra/jobs; docs/jobs.md). */
export const OUTBOUND_JOB = 'email-outbound';
