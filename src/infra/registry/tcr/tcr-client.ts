import { request } from 'undici';

/**
 * A small client of The Campaign Registry's CSP REST API (TCR "CSP API", HTTP basic auth with the API key as user
 * name and the secret as password). Paths and field names follow the published API description as mirrored by the
 * OpenAPI-generated client `haywiremk/php-campaignregistry` (docs/Api/{BrandApi,CampaignApi,CampaignBuilderApi}.md);
 * see ../shared/research/10dlc-anchors.md. NOT verified against the real registry (docs/compliance.md "TCR adapter").
 */
export interface TcrClientOptions {
  /** Base URL, e.g. `https://csp-api.campaignregistry.com/v2` (no trailing slash needed). */
  baseUrl: string;
  apiKey: string;
  apiSecret: string;
  /** Timeout of one call (headers and body), in ms. */
  timeoutMs: number;
}

/** A non-2xx answer from TCR (or a transport failure, `status` 0). `retryable` is false for 4xx other than 408/429. */
export class TcrApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = 'TcrApiError';
  }
}

/** Brand registration body (TCR `createBrand` table, research §5.1). Undefined fields are left out. */
export type TcrBrandRequest = Record<string, string | boolean | undefined>;

/** Campaign builder body (TCR `CampaignRequest`: brandId, usecase, sample1..5, flags, mnoIds, referenceId…). */
export type TcrCampaignRequest = Record<string, string | boolean | number[] | string[] | undefined>;

/** The CSP API calls the adapter makes. Every method throws {@link TcrApiError} on failure. */
export class TcrClient {
  readonly #base: string;
  readonly #auth: string;

  constructor(private readonly opts: TcrClientOptions) {
    this.#base = opts.baseUrl.replace(/\/+$/, '');
    this.#auth = `Basic ${Buffer.from(`${opts.apiKey}:${opts.apiSecret}`).toString('base64')}`;
  }

  async #call<T>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<T> {
    let res: Awaited<ReturnType<typeof request>>;
    try {
      res = await request(`${this.#base}${path}`, {
        method,
        headers: {
          authorization: this.#auth,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        headersTimeout: this.opts.timeoutMs,
        bodyTimeout: this.opts.timeoutMs,
      });
    } catch (err) {
      throw new TcrApiError(0, `${method} ${path}: ${(err as Error).message}`, true);
    }
    const text = await res.body.text();
    if (res.statusCode < 200 || res.statusCode >= 300) {
      const retryable = res.statusCode >= 500 || res.statusCode === 408 || res.statusCode === 429;
      throw new TcrApiError(
        res.statusCode,
        `${method} ${path}: HTTP ${res.statusCode} ${text.slice(0, 500)}`,
        retryable,
      );
    }
    if (text.trim() === '') return undefined as T;
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new TcrApiError(res.statusCode, `${method} ${path}: answer is not JSON`, true);
    }
  }

  /** `POST /brand/nonBlocking`: registers a brand; identity scoring ends later (BRAND_IDENTITY_STATUS_UPDATE). */
  createBrand(body: TcrBrandRequest): Promise<{ brandId: string; identityStatus?: string }> {
    return this.#call('POST', '/brand/nonBlocking', body);
  }

  /** `PUT /brand/{brandId}`: updates a brand's fields (research §5.3 per-field policy). */
  updateBrand(brandId: string, body: TcrBrandRequest): Promise<unknown> {
    return this.#call('PUT', `/brand/${encodeURIComponent(brandId)}`, body);
  }

  /** `PUT /brand/{brandId}/revet`: re-scores the brand's identity (non-blocking). */
  revetBrand(brandId: string): Promise<unknown> {
    return this.#call('PUT', `/brand/${encodeURIComponent(brandId)}/revet`);
  }

  /** `DELETE /brand/{brandId}`. */
  deleteBrand(brandId: string): Promise<unknown> {
    return this.#call('DELETE', `/brand/${encodeURIComponent(brandId)}`);
  }

  /** `POST /brand/{brandId}/externalVetting` `{evpId, vettingClass}`: orders an external vetting. */
  orderVetting(brandId: string, evpId: string, vettingClass: string): Promise<{ vettingId?: string }> {
    return this.#call('POST', `/brand/${encodeURIComponent(brandId)}/externalVetting`, { evpId, vettingClass });
  }

  /** `POST /campaignBuilder`: submits a campaign (optionally to a subset of MNOs with `mnoIds`). */
  createCampaign(body: TcrCampaignRequest): Promise<{ campaignId: string }> {
    return this.#call('POST', '/campaignBuilder', body);
  }

  /** `PUT /campaign/{campaignId}`: updates the editable campaign fields (description, samples, messageFlow…). */
  updateCampaign(campaignId: string, body: TcrCampaignRequest): Promise<unknown> {
    return this.#call('PUT', `/campaign/${encodeURIComponent(campaignId)}`, body);
  }

  /**
   * `POST /campaign/{campaignId}/nudge` `{nudgeIntent, description}` with intent REVIEW or APPEAL_REJECTION (the
   * intents of Bandwidth's mirror of TCR's nudge; event CAMPAIGN_NUDGE). The exact TCR path is an assumption.
   */
  nudgeCampaign(campaignId: string, nudgeIntent: 'REVIEW' | 'APPEAL_REJECTION', description: string): Promise<unknown> {
    return this.#call('POST', `/campaign/${encodeURIComponent(campaignId)}/nudge`, { nudgeIntent, description });
  }

  /** `DELETE /campaign/{campaignId}`: deactivates (EXPIRED, irreversible, idempotent at TCR). */
  deleteCampaign(campaignId: string): Promise<unknown> {
    return this.#call('DELETE', `/campaign/${encodeURIComponent(campaignId)}`);
  }

  /** `GET /campaign/{campaignId}/operationStatus`: `{<mnoId>: APPROVED|REVIEW|REJECTED|SUSPENDED}`. */
  operationStatus(campaignId: string): Promise<Record<string, string>> {
    return this.#call('GET', `/campaign/${encodeURIComponent(campaignId)}/operationStatus`);
  }
}
