// Prisma CLI configuration. Only `prisma generate` runs here: migrations are hand-written SQL in
// prisma/migrations applied by the service itself (see src/infra/migrate.ts and ARCHITECTURE.md).
import { defineConfig } from 'prisma/config';

export default defineConfig({
  schema: 'schema',
  migrations: { path: 'migrations' },
  datasource: { url: process.env.DATABASE_URL ?? 'postgresql://localhost:5432/switchboard' },
});
