// The SDK's OAuthClientProvider over one upstream's OAuthRecord: what the SDK's
// auth() reads and saves (client registration, tokens, PKCE verifier,
// discovery) lands in the record, and every change is handed to `persist`.
import type { AddClientAuthentication, OAuthClientProvider, OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { OAuthRecord } from '../../../src/protocol/oauth.js';
import { sanitiseText } from '../../../src/protocol/untrusted-text.js';
import { VERSION } from '../../../src/version.js';
import { authExtensions } from './sdk.js';

/** Compares two issuer identifiers as parsed URLs, tolerating one trailing slash (as the SDK does). */
export function sameIssuer(a: string, b: string): boolean {
  const norm = (value: string): string => {
    try {
      return new URL(value).href.replace(/\/$/, '');
    } catch {
      return value.replace(/\/$/, '');
    }
  };
  return norm(a) === norm(b);
}

/** Whether a URL may carry codes, verifiers, secrets and tokens: https, or plain http to this machine only. */
export function secureEndpoint(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.protocol === 'https:') return true;
  return url.protocol === 'http:' && (url.hostname === 'localhost' || url.hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(url.hostname));
}

/** The authorization server's endpoints that would be sent something of the sign-in, and that are not secure. */
export function insecureEndpoints(state: OAuthDiscoveryState): string[] {
  const metadata = (state.authorizationServerMetadata ?? {}) as Record<string, unknown>;
  const endpoints = [state.authorizationServerUrl, metadata.authorization_endpoint, metadata.token_endpoint, metadata.registration_endpoint];
  return endpoints.filter((endpoint): endpoint is string => typeof endpoint === 'string' && !secureEndpoint(endpoint));
}

/** The server config's `oauth` values (see server-config-schema.ts). */
export interface OAuthClientConfig {
  client_id?: string;
  client_secret?: string;
  /** PKCS#8 PEM: the client authenticates with a signed assertion (private_key_jwt, RFC 7523 §2.2) instead of a secret. */
  private_key?: string;
  private_key_alg?: string;
  /** The https URL of coffer's client ID metadata document, used as client_id where the authorization server supports that. */
  client_metadata_url?: string;
  scope?: string;
  grant_type?: string;
}

/** A token type is a short word: more of what the server sent is not shown. */
const MAX_TOKEN_TYPE_CHARS = 64;

/** The private_key_jwt default when no algorithm is configured (RFC 7518's mandatory one). */
const DEFAULT_JWT_ALG = 'RS256';

export class RecordProvider implements OAuthClientProvider {
  /** The daemon's callback; set by a sign-in (none: refresh only). */
  redirect: string | undefined;
  /** The state parameter of the sign-in being started. */
  nextState: string | undefined;
  /** Hides stored tokens, so that a sign-in asks a person instead of refreshing. */
  hideTokens = false;
  /** Filled by a sign-in the SDK started: where the person goes, and the verifier bound to it. */
  authorizationUrl: URL | undefined;
  verifier: string | undefined;
  /** Set with a configured private key: signs an assertion for the configured client. */
  private readonly signer: AddClientAuthentication | undefined;
  readonly clientMetadataUrl: string | undefined;

  constructor(
    public record: OAuthRecord,
    private readonly persist: () => void,
    private readonly configured: OAuthClientConfig,
    /** A line for the upstream's log (nothing secret). */
    private readonly note: (message: string) => void,
  ) {
    const { client_id, private_key, private_key_alg } = configured;
    if (client_id && private_key) {
      let signer: Promise<AddClientAuthentication> | undefined;
      const sign = (): Promise<AddClientAuthentication> =>
        (signer ??= authExtensions().then(({ createPrivateKeyJwtAuth }) => createPrivateKeyJwtAuth({ issuer: client_id, subject: client_id, privateKey: private_key, alg: private_key_alg ?? DEFAULT_JWT_ALG })));
      this.signer = async (...args) => (await sign())(...args);
    }
    this.clientMetadataUrl = configured.client_metadata_url;
  }

  /** Every secret value held for this upstream (client secret or key, tokens): none may be quoted back in an answer or a log. */
  secrets(): string[] {
    const { client, tokens } = this.record;
    const held = [this.configured.client_secret, this.configured.private_key, client?.client_secret, tokens?.access_token, tokens?.refresh_token];
    return held.filter((value): value is string => typeof value === 'string' && value !== '');
  }

  /** client_credentials: no person, no redirect; auth() then asks the token endpoint directly. */
  get machine(): boolean {
    return this.configured.grant_type === 'client_credentials';
  }

  get redirectUrl(): string | undefined {
    return this.machine ? undefined : this.redirect;
  }

  get clientMetadata(): OAuthClientMetadata & { application_type: string } {
    return {
      // A local program with a loopback redirect (OpenID Connect Registration §2, required by SEP-837).
      application_type: 'native',
      client_name: 'coffer',
      software_id: 'coffer',
      software_version: VERSION,
      redirect_uris: this.redirect && !this.machine ? [this.redirect] : [],
      grant_types: this.machine ? ['client_credentials'] : ['authorization_code', 'refresh_token'],
      response_types: this.machine ? [] : ['code'],
      ...(this.configured.scope ? { scope: this.configured.scope } : {}),
    };
  }

  prepareTokenRequest(scope?: string): URLSearchParams | undefined {
    if (!this.machine) return undefined;
    return new URLSearchParams({ grant_type: 'client_credentials', ...(scope ? { scope } : {}) });
  }

  state(): string {
    return this.nextState ?? '';
  }

  /** The SDK signs every token request with this when set: only for the configured client, where it belongs. */
  get addClientAuthentication(): AddClientAuthentication | undefined {
    return this.configuredClientHere() ? this.signer : undefined;
  }

  /** The authorization server the configured client belongs to: the first that accepted it (the SDK stamps it then). */
  private configuredIssuer(): string | undefined {
    const { client_id } = this.configured;
    const { configuredClient: bound, client: stored } = this.record;
    if (bound && bound.client_id === client_id) return bound.issuer;
    return stored && stored.client_id === client_id && typeof stored.issuer === 'string' ? stored.issuer : undefined;
  }

  /** Whether the authorization server now in use (discovery runs first) may be shown the configured client. */
  private configuredClientHere(): boolean {
    const bound = this.configuredIssuer();
    const current = this.discoveryState()?.authorizationServerUrl;
    return bound === undefined || current === undefined || sameIssuer(bound, current);
  }

  /**
   * The configured (pre-registered) client comes first, stamped with the authorization server it
   * belongs to: the SDK presents a stamped client to that server only and registers anew at
   * another, whose registration is then used there. A machine client cannot register: it fails.
   */
  clientInformation(): OAuthClientInformationMixed | undefined {
    const { client_id, client_secret } = this.configured;
    const stored = this.record.client as OAuthClientInformationMixed | undefined;
    if (client_id === undefined) return stored;
    if (!this.configuredClientHere()) {
      if (this.machine) {
        throw new Error(
          `the configured OAuth client belongs to authorization server ${this.configuredIssuer()}, and the upstream now names ${this.discoveryState()?.authorizationServerUrl}: its credentials are not sent there; give the server the client that authorization server issued (its oauth block)`,
        );
      }
      if (stored && stored.client_id !== client_id) return stored;
    }
    const issuer = this.configuredIssuer();
    return { client_id, ...(client_secret ? { client_secret } : {}), ...(issuer ? { issuer } : {}) };
  }

  saveClientInformation(info: OAuthClientInformationMixed): void {
    // The SDK stamps the configured client once an authorization server accepted it: it belongs to
    // that one, also after another registration replaces it here.
    const { client_id } = this.configured;
    const issuer = this.configuredIssuer() ?? (info.client_id === client_id && typeof info.issuer === 'string' ? info.issuer : undefined);
    if (client_id !== undefined && issuer !== undefined) this.record.configuredClient = { client_id, issuer };
    this.record.client = info as OAuthRecord['client'];
    this.persist();
  }

  tokens(): OAuthTokens | undefined {
    return this.hideTokens ? undefined : (this.record.tokens as OAuthTokens | undefined);
  }

  saveTokens(tokens: OAuthTokens): void {
    // Another type (DPoP, mac) is bound to a proof coffer does not make: sent as a bearer token it would be refused, or leak.
    if (tokens.token_type.toLowerCase() !== 'bearer') {
      const refusal = `the token endpoint issued a token of type "${sanitiseText(tokens.token_type, MAX_TOKEN_TYPE_CHARS)}": coffer sends Bearer tokens only (RFC 6750); ask the server's operator for a client that gets them`;
      // A refresh's failure here is swallowed by the SDK, which then asks for a sign-in: the log says why.
      this.note(refusal);
      throw new Error(refusal);
    }
    const now = Date.now();
    // A refresh answer may leave out the refresh token: the old one stays valid then (RFC 6749 §6).
    const refresh = tokens.refresh_token ?? this.record.tokens?.refresh_token;
    this.record.tokens = { ...tokens, ...(refresh ? { refresh_token: refresh } : {}) };
    this.record.obtainedAt = now;
    // A lifetime under a second (zero, negative: the SDK reads a null as 0) says nothing to schedule a refresh by.
    const lifetime = tokens.expires_in;
    const stated = typeof lifetime === 'number' && lifetime >= 1;
    if (lifetime !== undefined && !stated) this.note(`the token endpoint gave expires_in ${lifetime}, not a lifetime: the token is used until the upstream refuses it`);
    this.record.expiresAt = stated ? now + lifetime * 1000 : undefined;
    this.persist();
  }

  redirectToAuthorization(url: URL): void {
    this.authorizationUrl = url;
  }

  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }

  codeVerifier(): string {
    if (!this.verifier) throw new Error('no sign-in is under way');
    return this.verifier;
  }

  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    if (scope === 'all' || scope === 'client') delete this.record.client;
    if (scope === 'all' || scope === 'tokens') {
      delete this.record.tokens;
      delete this.record.expiresAt;
    }
    if (scope === 'all' || scope === 'discovery') delete this.record.discovery;
    if (scope === 'all' || scope === 'verifier') this.verifier = undefined;
    this.persist();
  }

  /**
   * RFC 8414 §3.3: the metadata must name the authorization server it was
   * fetched for, and its endpoints must be secure; otherwise it is refused
   * before anything is sent to them.
   */
  saveDiscoveryState(state: OAuthDiscoveryState): void {
    // OAuth 2.1 §1.5 and MCP's authorization spec: authorization server endpoints are served over TLS.
    const insecure = insecureEndpoints(state);
    if (insecure.length > 0) throw new Error(`the authorization server's endpoints must be https (plain http only to this machine): refused ${insecure.join(', ')}`);
    const issuer = state.authorizationServerMetadata?.issuer;
    if (issuer !== undefined && !sameIssuer(issuer, state.authorizationServerUrl)) {
      throw new Error(`the authorization server's metadata names issuer ${issuer}, not ${state.authorizationServerUrl}: refused (RFC 8414)`);
    }
    this.record.discovery = state as unknown as Record<string, unknown>;
    this.persist();
  }

  /** A held discovery with an insecure endpoint (saved before they were refused) is discovered again, and refused then. */
  discoveryState(): OAuthDiscoveryState | undefined {
    const state = this.record.discovery as OAuthDiscoveryState | undefined;
    return state && insecureEndpoints(state).length === 0 ? state : undefined;
  }
}
