import { expect } from "vitest";
import { UpstreamError } from "../../../src/gateway/providers/provider.js";

/** What an adapter call rejected with, checked to be an UpstreamError (a resolve fails the test). */
export async function upstreamFailure(p: Promise<unknown>): Promise<UpstreamError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(UpstreamError);
  return err as UpstreamError;
}
