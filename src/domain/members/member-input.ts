import { randomBytes } from "node:crypto";
import { invalid } from "../errors.js";
import { MEMBER_ROLES, type MemberRole } from "./member-record.js";

/**
 * The rules of a member's fields, shared by the API (whose schemas state the lengths too) and the
 * CLI, which reaches the service without them. Each failure is a 400 naming the field.
 */

/** What a member id looks like: `user_` and a URL-safe id. Anything else names no member. */
export const MEMBER_ID_RE = /^user_[A-Za-z0-9_-]{1,64}$/;

/** A new member id: `user_` and 144 random bits in base64url (24 characters). */
export const newMemberId = (): string => `user_${randomBytes(18).toString("base64url")}`;

export const MAX_EMAIL_LENGTH = 254;
export const MAX_MEMBER_NAME_LENGTH = 100;

/** One `@`, something on each side, no whitespace and no control characters. */
const EMAIL_RE = /^[^\s@\p{Cc}]+@[^\s@\p{Cc}]+$/u;
const CONTROL_RE = /\p{Cc}/u;

/** The stored form of an email: trimmed and lower-cased (unique per organization in that form). */
export function normaliseEmail(raw: string, field = "email"): string {
  const email = raw.trim().toLowerCase();
  if (email.length === 0) throw invalid(`${field}: must not be blank`);
  if (email.length > MAX_EMAIL_LENGTH) throw invalid(`${field}: at most ${MAX_EMAIL_LENGTH} characters`);
  if (!EMAIL_RE.test(email)) throw invalid(`${field}: must be an email address such as ada@example.com`);
  return email;
}

/** A first or last name: trimmed, 1..100 characters, no control characters; null stays null. */
export function checkMemberName(raw: string | null, field: string): string | null {
  if (raw === null) return null;
  const name = raw.trim();
  if (name.length === 0) throw invalid(`${field}: must not be blank (send null for none)`);
  if (name.length > MAX_MEMBER_NAME_LENGTH)
    throw invalid(`${field}: at most ${MAX_MEMBER_NAME_LENGTH} characters`);
  if (CONTROL_RE.test(name)) throw invalid(`${field}: must not contain control characters`);
  return name;
}

export function checkMemberRole(raw: string, field = "role"): MemberRole {
  if (!(MEMBER_ROLES as readonly string[]).includes(raw)) {
    throw invalid(`${field}: must be one of ${MEMBER_ROLES.join(", ")}`);
  }
  return raw as MemberRole;
}
