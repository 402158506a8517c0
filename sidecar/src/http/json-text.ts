/**
 * Answers whose JSON text the handler made itself (the `/evaluate` answer around the signed attestation's text, the
 * OpenAPI documents made once): fastify sends a string as it is, so the handler gives it the type fastify gives the
 * JSON it serializes.
 */
import type { FastifyReply } from "fastify";

/** The content type of every JSON answer: fastify's own, these, and those written below the routes (client-errors.ts). */
export const JSON_TYPE = "application/json; charset=utf-8";

/** Sends `text`, JSON the handler made, as it is. */
export function sendJsonText(reply: FastifyReply, text: string): FastifyReply {
  return reply.type(JSON_TYPE).send(text);
}
