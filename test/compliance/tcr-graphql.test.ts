import { describe, expect } from 'vitest';
import { ManualClock } from '../../src/infra/clock.js';
import { graphql } from '../generated/gql.js';
import { appTest } from '../helpers/fixture.js';
import { payload, typedError } from '../helpers/graphql.js';
import { activeBrand, campaignBody, freshNumbers } from './fixtures.js';

const RegisterTcrBrand = graphql(`
  mutation RegisterTcrBrand($input: CreateBrandInput!) {
    createBrand(input: $input) {
      __typename
      ... on CreateBrandPayload {
        brand {
          id companyName displayName street city state postalCode firstName lastName mobilePhone brandRelationship
          altBusinessId altBusinessIdType businessContactEmail referenceId mock vettingScore
          throughput { tier carriers { networkId dailyCap } }
        }
      }
      ... on Error { code field details { field code } }
    }
  }
`);
const CreateTcrCampaign = graphql(`
  mutation CreateTcrCampaign($input: CreateCampaignInput!) {
    createCampaign(input: $input) {
      __typename
      ... on CreateCampaignPayload {
        campaign {
          id messageFlow optinMessage optoutKeywords embeddedLink subUsecases privacyPolicyLink
          throughput { tier messageClass carriers { networkId messagesPerMinute messageClass } }
        }
      }
      ... on Error { code field details { field code } }
    }
  }
`);
const Lint = graphql(`
  query LintCampaign($input: JSON!) {
    lintCampaign(input: $input) {
      passes errorCount
      findings { code severity field fix networkIds }
      carriers { networkId wouldApprove rejectionCode }
    }
  }
`);
const Qualify = graphql(`
  query BrandQualificationFor($brandId: ID!, $usecase: String) {
    brandQualification(brandId: $brandId, usecase: $usecase) {
      throughputTier
      usecases {
        usecase usecaseClass minSubUsecases maxSubUsecases vettingRequired
        messageRequirements { optinMessage }
        carriers { networkId minMsgSamples carrierReviewRequired subscriberOptOutRequired dailyCap messageClass }
      }
    }
  }
`);
const CampaignState = graphql(`
  query CampaignState($id: ID!) {
    campaign(id: $id) {
      status
      carriers { networkId status rejectionCode rejectionReason }
      numbers { number state assignmentStatus }
      history { transitions { field from to cause carrier carrierNetworkId code } nextCursor }
      brand { history { transitions { field from to cause } } }
    }
  }
`);
const Numbers = graphql(`
  query LifecycleNumbers {
    phoneNumbers(first: 50) { edges { node { number state assignmentStatus failureReasons { code } nextStateAt } } }
  }
`);
const CampaignHistory = graphql(`
  query DeletedCampaignHistory($id: ID!) { campaignHistory(id: $id) { transitions { to cause } } }
`);
const DeleteCampaign = graphql(`
  mutation DeleteTcrCampaign($input: DeleteCampaignInput!) {
    deleteCampaign(input: $input) { __typename ... on DeleteCampaignPayload { deletedCampaignId } }
  }
`);

const clock = new ManualClock();
const it = appTest({ clock, env: { DID_WARMUP_MS: '60000', DID_COOLDOWN_MS: '60000' } });

describe('issue 14 over GraphQL: TCR fields, lint, qualification, throughput, number states, history', () => {
  it('registers with TCR fields and reports every violation at once with the same codes as REST', async ({ a }) => {
    const ok = await a.gql(RegisterTcrBrand, {
      input: {
        name: 'Jane Doe Photography',
        ein: '12-3456780',
        vertical: 'ENTERTAINMENT',
        entityType: 'SOLE_PROPRIETOR',
        firstName: 'Jane',
        lastName: 'Doe',
        mobilePhone: '+14155550123',
        referenceId: 'jane-gql',
        state: 'CA',
        postalCode: '94105',
        mock: true,
      },
    });
    expect(ok.errors).toBeUndefined();
    expect(payload(ok.data?.createBrand, 'CreateBrandPayload').brand).toMatchObject({
      companyName: 'Jane Doe Photography',
      displayName: 'Jane Doe Photography',
      mock: true,
      brandRelationship: null,
      throughput: { tier: 'SOLE_PROPRIETOR' },
    });
    const bad = await a.gql(RegisterTcrBrand, {
      input: { name: 'X', ein: '12-3456789', vertical: 'RETAIL', entityType: 'PUBLIC_PROFIT', state: 'Texas' },
    });
    const details = typedError(bad.data?.createBrand).details ?? [];
    expect(details.map((d) => `${d.field}:${d.code}`).sort()).toEqual([
      'businessContactEmail:REQUIRED',
      'state:INVALID_FORMAT',
      'stockExchange:REQUIRED',
      'stockSymbol:REQUIRED',
    ]);
  });

  it('lints, qualifies per carrier, shows throughput, number states and history', async ({ t, a }) => {
    const brand = await activeBrand(t, a);
    const lint = await a.gql(Lint, {
      input: {
        brandId: brand.id,
        usecase: 'CUSTOMER_CARE',
        sampleMessages: ['Your code is bit.ly/x today', 'Hello there friend, see you'],
      },
    });
    expect(lint.data?.lintCampaign.passes).toBe(false);
    expect(lint.data?.lintCampaign.findings.map((f) => f.code)).toEqual(
      expect.arrayContaining([
        'SAMPLE_MISSING_BRAND_NAME',
        'SAMPLE_MISSING_OPT_OUT',
        'SAMPLE_PUBLIC_URL_SHORTENER',
        'REQUIRED',
      ]),
    );
    const q = await a.gql(Qualify, { brandId: brand.id, usecase: 'LOW_VOLUME' });
    expect(q.data?.brandQualification.usecases).toHaveLength(1);
    expect(q.data?.brandQualification.usecases[0]).toMatchObject({ minSubUsecases: 1, maxSubUsecases: 5 });
    expect(q.data?.brandQualification.usecases[0]?.carriers.find((c) => c.networkId === 10035)).toMatchObject({
      minMsgSamples: 3,
      carrierReviewRequired: false,
      subscriberOptOutRequired: true,
      dailyCap: 2000,
    });

    const created = await a.gql(CreateTcrCampaign, {
      input: {
        ...campaignBody(brand.id),
        messageFlow: 'Customers opt in by ticking an SMS box at checkout on the Acme website.',
        optoutKeywords: 'STOP,QUIT',
        subUsecases: [],
      },
    });
    expect(created.errors).toBeUndefined();
    const c = payload(created.data!.createCampaign, 'CreateCampaignPayload').campaign;
    expect(c).toMatchObject({ optoutKeywords: 'STOP,QUIT', throughput: { tier: 'LOW', messageClass: 'T' } });
    const [n] = freshNumbers(1) as [string];
    await a.request('POST', '/api/numbers', { numbers: [n] });
    await a.request('POST', `/compliance/campaigns/${c.id}/numbers/assign`, { numbers: [n] });
    clock.advance(40_000);
    await t.drain();
    const state = await a.gql(CampaignState, { id: c.id });
    expect(state.data?.campaign.status).toBe('APPROVED');
    expect(state.data?.campaign.numbers).toEqual([{ number: n, state: 'warming', assignmentStatus: 'ASSIGNED' }]);
    expect(state.data?.campaign.history.transitions[0]).toMatchObject({
      field: 'status',
      from: null,
      to: 'PENDING',
      cause: 'CREATED',
    });
    expect(state.data?.campaign.history.transitions.filter((x) => x.field === 'carrierStatus')).toHaveLength(4);
    expect(state.data?.campaign.brand.history.transitions.map((x) => x.to)).toEqual(['PENDING', 'ACTIVE']);
    clock.advance(60_000);
    await t.drain();
    const nums = await a.gql(Numbers, {});
    expect(nums.data?.phoneNumbers.edges.map((e) => e.node)).toEqual([
      { number: n, state: 'active', assignmentStatus: 'ASSIGNED', failureReasons: [], nextStateAt: null },
    ]);
    await a.gql(DeleteCampaign, { input: { id: c.id } });
    const after = await a.gql(Numbers, {});
    expect(after.data?.phoneNumbers.edges[0]?.node).toMatchObject({
      state: 'cooling',
      assignmentStatus: 'PENDING_UNASSIGNMENT',
    });
    const hist = await a.gql(CampaignHistory, { id: c.id });
    expect(hist.data?.campaignHistory.transitions.at(-1)).toEqual({ to: 'DELETED', cause: 'DELETED' });
  });
});
