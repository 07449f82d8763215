import { Type } from "typebox";
import { CreditsSchema } from "../../domain/organizations/organization-credits.js";

/** Wire schema of `GET /credits` (docs/wire-compatibility.md "Credits"). */
export const CreditsResponse = Type.Object({ data: CreditsSchema });
