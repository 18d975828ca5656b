-- Contacts: who owns which email addresses and phone numbers (issue 20 section 2). An agent's SMS and call context
-- comes only from the handles of the contact whose emails contain the authenticated sender's address.

CREATE TABLE IF NOT EXISTS "contacts" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL REFERENCES "accounts"("id") ON DELETE CASCADE,
    "name" TEXT NOT NULL,
    "emails" TEXT[] NOT NULL DEFAULT '{}',
    "phones" TEXT[] NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "contacts_pkey" PRIMARY KEY ("id")
);
CREATE INDEX IF NOT EXISTS "contacts_account_id_id_idx" ON "contacts"("account_id", "id");

-- One row per address (lower-cased) or number (E.164) of a contact: the primary key makes a handle belong to at
-- most one contact of the account, also under concurrent writes, and is the index of the sender lookup.
CREATE TABLE IF NOT EXISTS "contact_handles" (
    "account_id" TEXT NOT NULL REFERENCES "accounts"("id") ON DELETE CASCADE,
    "value" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "contact_id" TEXT NOT NULL REFERENCES "contacts"("id") ON DELETE CASCADE,
    CONSTRAINT "contact_handles_pkey" PRIMARY KEY ("account_id", "value")
);
CREATE INDEX IF NOT EXISTS "contact_handles_contact_id_idx" ON "contact_handles"("contact_id");
