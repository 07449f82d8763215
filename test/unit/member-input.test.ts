import { describe, expect, it } from "vitest";
import { DomainError } from "../../src/domain/errors.js";
import {
  checkMemberName,
  checkMemberRole,
  MEMBER_ID_RE,
  newMemberId,
  normaliseEmail,
} from "../../src/domain/members/member-input.js";
import { defaultMembershipOf } from "../../src/domain/members/member-record.js";
import { defaultGuardrailId } from "../../src/domain/workspaces/workspace-record.js";
import { nameUuid } from "../../src/lib/name-uuid.js";

/** The rules of a member's fields (src/domain/members/member-input.ts) and the derived ids. */
const message = (fn: () => unknown): string => {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(DomainError);
    expect((e as DomainError).status).toBe(400);
    return (e as Error).message;
  }
  throw new Error("expected a 400");
};

describe("member fields", () => {
  it("emails are trimmed and lower-cased; anything without exactly one @ or with spaces is refused", () => {
    expect(normaliseEmail("  Ada.Lovelace+AI@Example.COM\n")).toBe("ada.lovelace+ai@example.com");
    expect(normaliseEmail("ops@localhost")).toBe("ops@localhost");
    for (const bad of ["ada", "@example.com", "ada@", "a@b@c", "a b@c", "a@b c", "a\u0000@b", "a@b\u0085"]) {
      expect(
        message(() => normaliseEmail(bad)),
        bad,
      ).toBe("email: must be an email address such as ada@example.com");
    }
    expect(message(() => normaliseEmail(" \t "))).toBe("email: must not be blank");
    expect(message(() => normaliseEmail(`${"a".repeat(250)}@b.io`))).toBe("email: at most 254 characters");
    expect(message(() => normaliseEmail("x", "--email"))).toMatch(/^--email: /);
  });

  it("names are trimmed, null stays null, blank and control characters are refused", () => {
    expect(checkMemberName(" Ada ", "first_name")).toBe("Ada");
    expect(checkMemberName(null, "first_name")).toBeNull();
    expect(message(() => checkMemberName("  ", "last_name"))).toBe(
      "last_name: must not be blank (send null for none)",
    );
    expect(message(() => checkMemberName("a\nb", "last_name"))).toBe(
      "last_name: must not contain control characters",
    );
    expect(message(() => checkMemberName("a".repeat(101), "first_name"))).toBe(
      "first_name: at most 100 characters",
    );
  });

  it("roles are org:admin or org:member", () => {
    expect(checkMemberRole("org:admin")).toBe("org:admin");
    expect(message(() => checkMemberRole("admin"))).toBe("role: must be one of org:admin, org:member");
  });

  it("member ids are user_ and 24 URL-safe characters, all different", () => {
    const ids = new Set(Array.from({ length: 1000 }, newMemberId));
    expect(ids.size).toBe(1000);
    for (const id of ids) {
      expect(id).toMatch(/^user_[A-Za-z0-9_-]{24}$/);
      expect(MEMBER_ID_RE.test(id)).toBe(true);
    }
    expect(MEMBER_ID_RE.test("user_2abcDEF")).toBe(true); // the hosted original's shape
    for (const bad of ["user_", "usr_x", "user_a b", "user_a\u0000", `user_${"a".repeat(65)}`]) {
      expect(MEMBER_ID_RE.test(bad), bad).toBe(false);
    }
  });
});

describe("derived ids", () => {
  it("nameUuid is RFC 4122 version 5 (the RFC's DNS example)", () => {
    expect(nameUuid("6ba7b810-9dad-11d1-80b4-00c04fd430c8", "www.example.com")).toBe(
      "2ed6657d-e927-568b-95e1-2665a8aea6a2",
    );
  });

  it("a default workspace guardrail id is unchanged by the move to nameUuid", () => {
    // The value the previous, inline implementation gave: stored guardrails and clients rely on it.
    expect(defaultGuardrailId("0b1e7a52-33c4-4f8e-9d6a-1c2b3d4e5f60")).toBe(
      "dd0debd0-19ca-51d9-b488-448085462c09",
    );
    expect(defaultGuardrailId("0B1E7A52-33C4-4F8E-9D6A-1C2B3D4E5F60")).toBe(
      "dd0debd0-19ca-51d9-b488-448085462c09",
    );
  });

  it("default-workspace memberships: one id per (workspace, member), stable", () => {
    const m = {
      id: "user_a",
      organization_id: "o",
      email: "a@b",
      first_name: null,
      last_name: null,
      role: "org:admin",
      created_at: "2026-01-01T00:00:00.000Z",
      updated_at: "2026-01-01T00:00:00.000Z",
    };
    const ws = "0b1e7a52-33c4-4f8e-9d6a-1c2b3d4e5f60";
    const a = defaultMembershipOf(ws, m);
    expect(a).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      workspace_id: ws,
      user_id: "user_a",
      role: "admin",
      created_at: m.created_at,
    });
    expect(defaultMembershipOf(ws, m).id).toBe(a.id);
    expect(defaultMembershipOf(ws, { ...m, id: "user_b" }).id).not.toBe(a.id);
    expect(defaultMembershipOf("1b1e7a52-33c4-4f8e-9d6a-1c2b3d4e5f60", m).id).not.toBe(a.id);
  });
});
