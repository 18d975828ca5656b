-- Issue 20 sections 3 and 4: the SMTP TLS certificate shared by every instance, SMTP submission credentials of
-- identities, DKIM keys of hosted domains, and the custom domains of accounts.

-- The generated self-signed certificate (PostgreSQL mode; PGlite keeps it in DATA_DIR). One row, id 'default'.
CREATE TABLE IF NOT EXISTS "smtp_tls_certificates" (
    "id" TEXT NOT NULL,
    "cert_pem" TEXT NOT NULL,
    -- AES-256-GCM under the secrets key (src/infra/secrets.ts), AAD = the row id.
    "key_encrypted" TEXT NOT NULL,
    "key_id" TEXT NOT NULL,
    "fingerprint256" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "smtp_tls_certificates_pkey" PRIMARY KEY ("id")
);

-- One submission password per identity: a salted scrypt hash, never the password.
CREATE TABLE IF NOT EXISTS "email_smtp_credentials" (
    "identity_id" TEXT NOT NULL REFERENCES "email_identities"("id") ON DELETE CASCADE,
    "account_id" TEXT NOT NULL REFERENCES "accounts"("id") ON DELETE CASCADE,
    "password_hash" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "email_smtp_credentials_pkey" PRIMARY KEY ("identity_id")
);

-- The DKIM key of each hosted domain (configured or custom), generated once.
CREATE TABLE IF NOT EXISTS "email_dkim_keys" (
    "domain" TEXT NOT NULL,
    "selector" TEXT NOT NULL,
    "public_key" TEXT NOT NULL,
    -- AES-256-GCM under the secrets key, AAD = 'dkim:' || domain.
    "private_key_encrypted" TEXT NOT NULL,
    "key_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "email_dkim_keys_pkey" PRIMARY KEY ("domain")
);

-- Custom domains of accounts: one account per domain across the service.
CREATE TABLE IF NOT EXISTS "email_domains" (
    "domain" TEXT NOT NULL,
    "account_id" TEXT NOT NULL REFERENCES "accounts"("id") ON DELETE CASCADE,
    "status" TEXT NOT NULL,
    "verified_at" TIMESTAMPTZ(3),
    "checked_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "email_domains_pkey" PRIMARY KEY ("domain")
);
CREATE INDEX IF NOT EXISTS "email_domains_account_id_created_at_idx" ON "email_domains"("account_id", "created_at");
