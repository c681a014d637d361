/**
 * The two discovery documents (contract 15), with exactly the contract's fields: RFC 9728 protected
 * resource metadata for /mcp, and RFC 8414 authorization server metadata. `base` is public_url, else the
 * daemon's own URL.
 */

export function protectedResourceMetadata(base: string): Record<string, unknown> {
  return { resource: `${base}/mcp`, authorization_servers: [base] };
}

export function authorizationServerMetadata(base: string): Record<string, unknown> {
  return {
    issuer: base,
    authorization_endpoint: `${base}/authorize`,
    token_endpoint: `${base}/token`,
    registration_endpoint: `${base}/register`,
    revocation_endpoint: `${base}/revoke`,
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
  };
}
