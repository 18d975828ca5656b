-- Email area: agents, knowledge documents, identities, threads, messages, agent jobs.

CREATE TABLE "agents" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL REFERENCES "accounts"("id") ON DELETE CASCADE,
    "name" TEXT NOT NULL,
    "system_prompt" TEXT NOT NULL,
    "text_model" TEXT,
    "context_sources" TEXT[],
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "agents_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "agents_account_id_created_at_idx" ON "agents"("account_id", "created_at");

CREATE TABLE "agent_knowledge_documents" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL REFERENCES "accounts"("id") ON DELETE CASCADE,
    "agent_id" TEXT NOT NULL REFERENCES "agents"("id") ON DELETE CASCADE,
    "title" TEXT NOT NULL,
    "content" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "agent_knowledge_documents_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "agent_knowledge_documents_agent_id_created_at_idx" ON "agent_knowledge_documents"("agent_id", "created_at");

CREATE TABLE "email_identities" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL REFERENCES "accounts"("id") ON DELETE CASCADE,
    "address" TEXT NOT NULL,
    "local_part" TEXT NOT NULL,
    "domain" TEXT NOT NULL,
    "display_name" TEXT,
    "agent_id" TEXT REFERENCES "agents"("id") ON DELETE SET NULL,
    "status" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "deprovisioned_at" TIMESTAMPTZ(3),
    CONSTRAINT "email_identities_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "email_identities_address_key" ON "email_identities"("address");
CREATE INDEX "email_identities_account_id_created_at_idx" ON "email_identities"("account_id", "created_at");
CREATE INDEX "email_identities_status_deprovisioned_at_idx" ON "email_identities"("status", "deprovisioned_at");

CREATE TABLE "email_threads" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL REFERENCES "accounts"("id") ON DELETE CASCADE,
    "identity_id" TEXT NOT NULL REFERENCES "email_identities"("id") ON DELETE CASCADE,
    "subject" TEXT NOT NULL,
    "participants" TEXT[],
    "message_count" INTEGER NOT NULL,
    "last_message_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "email_threads_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "email_threads_identity_id_last_message_at_id_idx" ON "email_threads"("identity_id", "last_message_at" DESC, "id" DESC);

CREATE TABLE "email_messages" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL REFERENCES "accounts"("id") ON DELETE CASCADE,
    "identity_id" TEXT NOT NULL,
    "thread_id" TEXT NOT NULL REFERENCES "email_threads"("id") ON DELETE CASCADE,
    "message_id" TEXT NOT NULL,
    "direction" TEXT NOT NULL,
    "from_address" TEXT NOT NULL,
    "to_addresses" TEXT[],
    "subject" TEXT NOT NULL,
    "body" TEXT NOT NULL,
    "in_reply_to" TEXT,
    "references" TEXT[],
    "auto_submitted" TEXT,
    "status" TEXT NOT NULL,
    "status_detail" TEXT,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3),
    "sent_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "email_messages_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "email_messages_identity_id_message_id_key" ON "email_messages"("identity_id", "message_id");
CREATE INDEX "email_messages_thread_id_sent_at_idx" ON "email_messages"("thread_id", "sent_at");
CREATE INDEX "email_messages_status_next_attempt_at_idx" ON "email_messages"("status", "next_attempt_at");

CREATE TABLE "email_agent_jobs" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL REFERENCES "accounts"("id") ON DELETE CASCADE,
    "identity_id" TEXT NOT NULL,
    "agent_id" TEXT NOT NULL,
    "message_row_id" TEXT NOT NULL REFERENCES "email_messages"("id") ON DELETE CASCADE,
    "status" TEXT NOT NULL,
    "reason" TEXT,
    "last_error" TEXT,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL,
    "reply_message_id" TEXT,
    "sender" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "email_agent_jobs_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "email_agent_jobs_message_row_id_key" ON "email_agent_jobs"("message_row_id");
CREATE INDEX "email_agent_jobs_status_next_attempt_at_idx" ON "email_agent_jobs"("status", "next_attempt_at");
CREATE INDEX "email_agent_jobs_identity_id_sender_status_updated_at_idx" ON "email_agent_jobs"("identity_id", "sender", "status", "updated_at");
