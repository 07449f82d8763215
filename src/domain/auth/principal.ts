/** Who is calling: the authenticated key, reduced to what authorisation needs. */
export interface Principal {
  keyHash: string;
  keyId: number;
  organizationId: string;
  workspaceId: string;
  isManagement: boolean;
}
