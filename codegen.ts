import type { CodegenConfig } from '@graphql-codegen/cli';

/**
 * GraphQL Code Generator: typed documents for the tests. Reads the committed schema.graphql and every `graphql(…)`
 * document under test/, writes test/generated/ (ignored by git; `npm install` runs it through `npm run generate`).
 */
const config: CodegenConfig = {
  schema: 'schema.graphql',
  documents: ['test/**/*.ts', '!test/generated/**'],
  ignoreNoDocuments: true,
  emitLegacyCommonJSImports: false,
  generates: {
    'test/generated/': {
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      config: {
        scalars: { DateTime: 'string', JSON: 'unknown' },
        enumsAsTypes: true,
        useTypeImports: true,
      },
    },
  },
};

export default config;
