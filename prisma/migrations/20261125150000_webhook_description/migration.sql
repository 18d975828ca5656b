-- A webhook's free-text description (issue 25: PATCH /api/webhooks/{id} sets `description`); null when none.
ALTER TABLE "webhooks" ADD COLUMN IF NOT EXISTS "description" TEXT;
