import { describe, expect } from 'vitest';
import { ManualClock } from '../../src/infra/clock.js';
import { graphql } from '../generated/gql.js';
import type { TestAccount, TestApp } from '../helpers/app.js';
import { appTest } from '../helpers/fixture.js';
import { payload, typedError } from '../helpers/graphql.js';
import { brandBody, campaignBody, freshNumbers } from './fixtures.js';

const RegisterBrand = graphql(`
  mutation RegisterBrand($input: CreateBrandInput!) {
    createBrand(input: $input) {
      __typename
      ... on CreateBrandPayload { brand { id name ein vertical entityType country status identityStatus createdAt } }
      ... on Error { code field details { field code } }
    }
  }
`);
const BrandDetail = graphql(`
  query BrandDetail($id: ID!) {
    brand(id: $id) {
      id status identityStatus
      feedback { category { id displayName description fields } }
      vettings { vettingId evpId vettingClass status vettingScore completedAt }
      qualification { qualified usecases { usecase qualifies carriers { networkId carrier carrierReviewRequired minMsgSamples } } }
    }
  }
`);
const Brands = graphql(`
  query Brands($first: Int, $after: String) {
    brands(first: $first, after: $after) { edges { cursor node { id name } } pageInfo { hasNextPage endCursor } }
  }
`);
const UpdateBrand = graphql(`
  mutation UpdateBrand($input: UpdateBrandInput!) {
    updateBrand(input: $input) { __typename ... on UpdateBrandPayload { brand { id ein status identityStatus } } ... on Error { code field details { field code } } }
  }
`);
const RevetBrand = graphql(`
  mutation RevetBrand($input: RevetBrandInput!) {
    revetBrand(input: $input) { __typename ... on RevetBrandPayload { brand { id status } } ... on Error { code field details { field code } } }
  }
`);
const DeleteBrand = graphql(`
  mutation DeleteBrand($input: DeleteBrandInput!) {
    deleteBrand(input: $input) { __typename ... on DeleteBrandPayload { deletedBrandId } ... on Error { code field details { field code } } }
  }
`);
const ApplyForVetting = graphql(`
  mutation ApplyForVetting($input: ApplyForBrandVettingInput!) {
    applyForBrandVetting(input: $input) {
      __typename ... on ApplyForBrandVettingPayload { created vetting { vettingId evpId status } } ... on Error { code field details { field code } }
    }
  }
`);
const CreateCampaign = graphql(`
  mutation CreateCampaign($input: CreateCampaignInput!) {
    createCampaign(input: $input) {
      __typename
      ... on CreateCampaignPayload {
        campaign { id brandId usecase status carriers { networkId carrier status approvedAt estimatedDecisionAt } }
      }
      ... on Error { code field details { field code } }
    }
  }
`);
const CampaignDetail = graphql(`
  query CampaignDetail($id: ID!) {
    campaign(id: $id) {
      id status sendable expedited numberCount
      blockingReasons { code networkId message }
      carriers { networkId carrier status approvedAt }
      numbers { number assignedAt }
      brand { id status }
    }
  }
`);
const Campaigns = graphql(`
  query Campaigns($first: Int, $after: String, $brandId: ID) {
    campaigns(first: $first, after: $after, brandId: $brandId) { edges { node { id status } } pageInfo { hasNextPage endCursor } }
  }
`);
const UpdateCampaign = graphql(`
  mutation UpdateCampaign($input: UpdateCampaignInput!) {
    updateCampaign(input: $input) { __typename ... on UpdateCampaignPayload { campaign { id numberPool status } } ... on Error { code field details { field code } } }
  }
`);
const NudgeCampaign = graphql(`
  mutation NudgeCampaign($input: NudgeCampaignInput!) {
    nudgeCampaign(input: $input) {
      __typename ... on NudgeCampaignPayload { campaign { id carriers { networkId estimatedDecisionAt } } } ... on Error { code field details { field code } }
    }
  }
`);
const ExpediteCampaign = graphql(`
  mutation ExpediteCampaign($input: ExpediteCampaignInput!) {
    expediteCampaign(input: $input) { __typename ... on ExpediteCampaignPayload { campaign { id expedited } } ... on Error { code field details { field code } } }
  }
`);
const DeleteCampaign = graphql(`
  mutation DeleteCampaign($input: DeleteCampaignInput!) {
    deleteCampaign(input: $input) { __typename ... on DeleteCampaignPayload { deletedCampaignId unlinkedNumbers } ... on Error { code field details { field code } } }
  }
`);
const ProvisionNumbers = graphql(`
  mutation ProvisionNumbers($input: ProvisionNumbersInput!) {
    provisionNumbers(input: $input) {
      __typename ... on ProvisionNumbersPayload { phoneNumbers { number campaignId createdAt } } ... on Error { code field details { field code } }
    }
  }
`);
const PhoneNumbers = graphql(`
  query PhoneNumbers($first: Int) { phoneNumbers(first: $first) { edges { node { number campaignId } } pageInfo { hasNextPage } } }
`);
const AssignNumbers = graphql(`
  mutation AssignNumbers($input: AssignCampaignNumbersInput!) {
    assignCampaignNumbers(input: $input) {
      __typename ... on AssignCampaignNumbersPayload { campaignId assigned alreadyAssigned numbers } ... on Error { code field details { field code } }
    }
  }
`);
const RemoveNumbers = graphql(`
  mutation RemoveNumbers($input: RemoveCampaignNumbersInput!) {
    removeCampaignNumbers(input: $input) { __typename ... on RemoveCampaignNumbersPayload { campaignId removed numbers } ... on Error { code field details { field code } } }
  }
`);
const ReleaseNumber = graphql(`
  mutation ReleaseNumber($input: ReleaseNumberInput!) {
    releaseNumber(input: $input) { __typename ... on ReleaseNumberPayload { releasedNumber } ... on Error { code field details { field code } } }
  }
`);
const DidMapping = graphql(`
  query DidMapping($limit: Int, $cursor: String) {
    didMapping(limit: $limit, cursor: $cursor) { entries { number campaignId campaignStatus } nextCursor }
  }
`);
const ComplianceEnum = graphql(`query ComplianceEnum($name: String!) { complianceEnum(name: $name) { name values } }`);

const clock = new ManualClock();
const it = appTest({ clock });

describe('compliance over GraphQL', () => {
  /** The file's app, for the helpers below (tests get it as the `t` fixture). */
  let t: TestApp;
  it.beforeAll(({ t: app }) => {
    t = app;
  });
  const advance = async (ms: number) => {
    clock.advance(ms);
    await t.drain();
  };
  const register = async (a: TestAccount, overrides: Record<string, unknown> = {}) => {
    const { phone: _p, ...body } = brandBody(overrides);
    const res = await a.gql(RegisterBrand, { input: body as never });
    expect(res.errors).toBeUndefined();
    return payload(res.data!.createBrand, 'CreateBrandPayload').brand;
  };

  it('registers, reads, pages, updates, revets and deletes brands, with feedback, vettings and qualification', async ({
    a,
  }) => {
    const brand = await register(a, { ein: '00-1234567' });
    expect(brand).toMatchObject({
      status: 'PENDING',
      identityStatus: 'SELF_DECLARED',
      country: 'US',
      vertical: 'RETAIL',
    });
    await register(a, { name: 'Second LLC' });
    await advance(5_000);
    const failed = await a.gql(BrandDetail, { id: brand.id });
    expect(failed.data?.brand).toMatchObject({ status: 'FAILED', identityStatus: 'UNVERIFIED' });
    expect(failed.data?.brand.feedback.category.map((c) => c.id)).toEqual(['TAX_ID']);
    expect(failed.data?.brand.qualification.qualified).toBe(false);

    const page1 = await a.gql(Brands, { first: 1 });
    expect(page1.data?.brands.edges.map((e) => e.node.id)).toEqual([brand.id]);
    expect(page1.data?.brands.pageInfo.hasNextPage).toBe(true);
    const page2 = await a.gql(Brands, { first: 1, after: page1.data!.brands.pageInfo.endCursor });
    expect(page2.data?.brands.edges.map((e) => e.node.name)).toEqual(['Second LLC']);
    expect(page2.data?.brands.pageInfo.hasNextPage).toBe(false);

    const { phone: _p, ...fixed } = brandBody({ ein: '12-1234567' });
    const updated = await a.gql(UpdateBrand, { input: { id: brand.id, ...fixed } as never });
    expect(payload(updated.data?.updateBrand, 'UpdateBrandPayload').brand).toMatchObject({
      ein: '12-1234567',
      status: 'PENDING',
    });
    await advance(5_000);
    const revet = await a.gql(RevetBrand, { input: { id: brand.id } });
    expect(payload(revet.data?.revetBrand, 'RevetBrandPayload').brand.status).toBe('PENDING');
    await advance(5_000);

    const vetting = await a.gql(ApplyForVetting, { input: { brandId: brand.id, evpId: 'WMC' } });
    expect(payload(vetting.data?.applyForBrandVetting, 'ApplyForBrandVettingPayload')).toMatchObject({
      created: true,
      vetting: { evpId: 'WMC', status: 'PENDING' },
    });
    await advance(30_000);
    const detail = await a.gql(BrandDetail, { id: brand.id });
    expect(detail.data?.brand).toMatchObject({ status: 'ACTIVE', identityStatus: 'VETTED_VERIFIED' });
    expect(detail.data?.brand.vettings[0]).toMatchObject({ status: 'APPROVED', vettingScore: 50 + (67 % 51) });
    const political = detail.data?.brand.qualification.usecases.find((u) => u.usecase === 'POLITICAL');
    expect(political?.qualifies).toBe(true);
    expect(political?.carriers[0]).toEqual({
      networkId: 10017,
      carrier: 'AT&T',
      carrierReviewRequired: true,
      minMsgSamples: 2,
    });

    const deleted = await a.gql(DeleteBrand, { input: { id: brand.id } });
    expect(payload(deleted.data?.deleteBrand, 'DeleteBrandPayload').deletedBrandId).toBe(brand.id);
    const gone = await a.gql(BrandDetail, { id: brand.id });
    expect(gone.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND', status: 404 });
  });

  it('answers every validation violation as a typed ValidationError with the REST codes', async ({ a }) => {
    const res = await a.gql(RegisterBrand, {
      input: { name: '', ein: '12345', vertical: 'RETAIL', entityType: 'PUBLIC_PROFIT', phone: '12' },
    });
    expect(res.errors).toBeUndefined();
    const invalid = typedError(res.data?.createBrand);
    expect(invalid).toMatchObject({ __typename: 'ValidationError', code: 'VALIDATION_FAILED' });
    expect(invalid.details?.map((d) => `${d.field}:${d.code}`).sort()).toEqual([
      'businessContactEmail:REQUIRED',
      'ein:INVALID_FORMAT',
      'name:TOO_SHORT',
      'phone:INVALID_FORMAT',
      'stockExchange:REQUIRED',
      'stockSymbol:REQUIRED',
    ]);
    const campaign = await a.gql(CreateCampaign, {
      input: {
        brandId: 'x',
        usecase: 'NOPE',
        description: 'short',
        sampleMessages: ['one'],
        subscriberOptIn: true,
        subscriberHelp: true,
      },
    });
    expect(
      typedError(campaign.data?.createCampaign)
        .details?.map((d) => d.field)
        .sort(),
    ).toEqual(['description', 'sampleMessages', 'sampleMessages.0', 'usecase']);
  });

  it('runs the campaign and number lifecycle: create, carriers, nudge, expedite, numbers, did mapping, delete', async ({
    a,
  }) => {
    const brand = await register(a);
    await advance(5_000);
    const input = campaignBody(brand.id);
    const created = await a.gql(CreateCampaign, { input });
    expect(created.errors).toBeUndefined();
    const campaign = payload(created.data!.createCampaign, 'CreateCampaignPayload').campaign;
    expect(campaign).toMatchObject({ brandId: brand.id, usecase: 'CUSTOMER_CARE', status: 'PENDING' });
    expect(campaign.carriers.map((c) => c.networkId)).toEqual([10017, 10035, 10037, 10038]);
    const second = payload(
      (await a.gql(CreateCampaign, { input })).data!.createCampaign,
      'CreateCampaignPayload',
    ).campaign;

    const nudged = await a.gql(NudgeCampaign, {
      input: { id: campaign.id, nudgeIntent: 'REVIEW', description: 'Please' },
    });
    const start = clock.now().getTime();
    const nudgedCampaign = payload(nudged.data?.nudgeCampaign, 'NudgeCampaignPayload').campaign;
    expect(nudgedCampaign.carriers.map((c) => Date.parse(c.estimatedDecisionAt!) - start)).toEqual([
      5_000, 10_000, 20_000, 15_000,
    ]);
    const expedited = await a.gql(ExpediteCampaign, { input: { id: campaign.id } });
    expect(payload(expedited.data?.expediteCampaign, 'ExpediteCampaignPayload').campaign.expedited).toBe(true);
    const updated = await a.gql(UpdateCampaign, { input: { id: campaign.id, numberPool: true } });
    expect(payload(updated.data?.updateCampaign, 'UpdateCampaignPayload').campaign.numberPool).toBe(true);

    const numbers = freshNumbers(3).sort();
    const provisioned = await a.gql(ProvisionNumbers, { input: { numbers } });
    expect(
      payload(provisioned.data?.provisionNumbers, 'ProvisionNumbersPayload').phoneNumbers.map((n) => n.number),
    ).toEqual(numbers);
    const listed = await a.gql(PhoneNumbers, { first: 2 });
    expect(listed.data?.phoneNumbers.edges.map((e) => e.node.number)).toEqual(numbers.slice(0, 2));
    expect(listed.data?.phoneNumbers.pageInfo.hasNextPage).toBe(true);
    const assigned = await a.gql(AssignNumbers, { input: { campaignId: campaign.id, numbers: numbers.slice(0, 2) } });
    expect(assigned.data?.assignCampaignNumbers).toEqual({
      __typename: 'AssignCampaignNumbersPayload',
      campaignId: campaign.id,
      assigned: numbers.slice(0, 2),
      alreadyAssigned: [],
      numbers: numbers.slice(0, 2),
    });
    const conflict = await a.gql(AssignNumbers, { input: { campaignId: second.id, numbers: [numbers[0]!] } });
    expect(conflict.data?.assignCampaignNumbers).toMatchObject({
      __typename: 'ConflictError',
      code: 'NUMBER_ASSIGNED_ELSEWHERE',
    });
    const removed = await a.gql(RemoveNumbers, { input: { campaignId: campaign.id, numbers: [numbers[1]!] } });
    expect(removed.data?.removeCampaignNumbers).toEqual({
      __typename: 'RemoveCampaignNumbersPayload',
      campaignId: campaign.id,
      removed: [numbers[1]],
      numbers: [numbers[0]],
    });

    await advance(4_000);
    const detail = await a.gql(CampaignDetail, { id: campaign.id });
    expect(detail.data?.campaign).toMatchObject({
      status: 'APPROVED',
      sendable: true,
      expedited: true,
      numberCount: 1,
      blockingReasons: [],
      numbers: [{ number: numbers[0] }],
      brand: { id: brand.id, status: 'ACTIVE' },
    });
    const mapping = await a.gql(DidMapping, {});
    expect(mapping.data?.didMapping).toEqual({
      entries: [
        { number: numbers[0], campaignId: campaign.id, campaignStatus: 'APPROVED' },
        { number: numbers[1], campaignId: null, campaignStatus: null },
        { number: numbers[2], campaignId: null, campaignStatus: null },
      ],
      nextCursor: null,
    });
    const firstPage = await a.gql(DidMapping, { limit: 2 });
    const rest = await a.gql(DidMapping, { cursor: firstPage.data!.didMapping.nextCursor });
    expect(rest.data?.didMapping.entries.map((e) => e.number)).toEqual([numbers[2]]);

    const campaigns = await a.gql(Campaigns, { first: 10 });
    expect(campaigns.data?.campaigns.edges.map((e) => e.node.id)).toEqual([campaign.id, second.id]);
    const none = await a.gql(Campaigns, { first: 10, brandId: 'no-such-brand' });
    expect(none.data?.campaigns.edges).toEqual([]);

    const refusedRelease = await a.gql(ReleaseNumber, { input: { number: numbers[0]! } });
    expect(typedError(refusedRelease.data?.releaseNumber)).toMatchObject({
      __typename: 'ConflictError',
      code: 'NUMBER_ASSIGNED',
    });
    const deleted = await a.gql(DeleteCampaign, { input: { id: campaign.id } });
    expect(deleted.data?.deleteCampaign).toEqual({
      __typename: 'DeleteCampaignPayload',
      deletedCampaignId: campaign.id,
      unlinkedNumbers: [numbers[0]],
    });
    const released = await a.gql(ReleaseNumber, { input: { number: numbers[0]! } });
    expect(payload(released.data?.releaseNumber, 'ReleaseNumberPayload').releasedNumber).toBe(numbers[0]);
    const brandDelete = await a.gql(DeleteBrand, { input: { id: brand.id } });
    expect(brandDelete.errors).toBeUndefined();
    expect(brandDelete.data?.deleteBrand).toMatchObject({ __typename: 'ConflictError', code: 'BRAND_HAS_CAMPAIGNS' });
  });

  it('serves the enums and isolates accounts (NOT_FOUND)', async ({ t, a }) => {
    const vertical = await a.gql(ComplianceEnum, { name: 'vertical' });
    expect(vertical.data?.complianceEnum.values).toHaveLength(19);
    const other = await t.newAccount();
    const brand = await register(a);
    const res = await other.gql(BrandDetail, { id: brand.id });
    expect(res.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect((await other.gql(Brands, {})).data?.brands.edges).toEqual([]);
  });
});
