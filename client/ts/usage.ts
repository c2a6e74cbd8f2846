// A typed use of the TypeScript types openapi-typescript 7 generates from openapi.json
// (.ci/clients generates ./openapi.ts beside a copy of this file and runs tsc --strict over
// both). Each @ts-expect-error is a wrong type that must not compile: were the document to
// let a field come out as unknown (or any), the line would compile, the directive would be
// unused, and tsc would fail.
import type { components, operations } from "./openapi";

type Schemas = components["schemas"];
type Body<Op extends keyof operations> = operations[Op] extends {
  requestBody?: { content: { "application/json": infer B } };
}
  ? B
  : never;
type OK<Op extends keyof operations> = operations[Op]["responses"] extends {
  200: { content: { "application/json": infer R } };
}
  ? R
  : never;
type Path<Op extends keyof operations> = operations[Op]["parameters"] extends { path: infer P } ? P : never;
type Query<Op extends keyof operations> = operations[Op]["parameters"] extends { query?: infer Q } ? Q : never;

// Create User: strings where strings are, null for an absent optional field.
export const ada: Body<"createUser"> = {
  name: "Ada Lovelace",
  email: "ada@example.com",
  phone_country_code: "+44",
  phone: "2079460000",
};
export const nulls: Body<"createUser"> = { name: "Ada", email: "ada@example.com", phone: null, phone_country_code: null };
// @ts-expect-error an email is a string, not a number
export const emailNumber: Body<"createUser"> = { name: "Ada", email: 42 };
// @ts-expect-error name is required
export const noName: Body<"createUser"> = { email: "ada@example.com" };
// @ts-expect-error the body is closed: no member the schema does not name
export const extraMember: Body<"createUser"> = { name: "Ada", email: "ada@example.com", nickname: "A" };

// Path parameters: ids are strings.
export const getUser: Path<"getUser"> = { user_id: "0b7e2f64-3c1a-4f5e-9d2b-6a8c1e4f7a90" };
// @ts-expect-error a user id is a string, not an object
export const idObject: Path<"getUser"> = { user_id: { no: "uuid" } };
// @ts-expect-error an account id is a string, not a number
export const idNumber: Path<"getBankAccount"> = { account_id: 42 };

// Query parameters.
export const rules: Query<"getPayeeRules"> = { country_code: "IN", payout_currency: "INR" };
// @ts-expect-error a currency is a string
export const currencyNumber: Query<"getExchangeRates"> = { payout_currency: 356 };

// List Users: rows_per_page is one of 10, 20, 50, 100, or null.
export const firstPage: Body<"listUsers"> = { rows_per_page: 10, page_no: 1 };
export const defaults: Body<"listUsers"> = { rows_per_page: null, page_no: null };
// @ts-expect-error 15 is not one of the page sizes
export const oddPage: Body<"listUsers"> = { rows_per_page: 15 };
// @ts-expect-error a page number is a number
export const pageString: Body<"listUsers"> = { page_no: "1" };

// Enums of bodies.
export const account: Body<"addBankAccount">["account_type"] = "PERSONAL_CHECKING";
// @ts-expect-error not an account type
export const accountType: Body<"addBankAccount">["account_type"] = "CHECKING";

// Answers: typed members, reached through the envelope.
export function userOf(answer: OK<"createUser">): Schemas["User"] {
  const id: string = answer.data.user_id;
  const email: string | null = answer.data.email;
  const pw: number = answer.data.pw_id;
  void id, email, pw;
  // @ts-expect-error email may be null
  const notNull: string = answer.data.email;
  void notNull;
  return answer.data;
}
export function rateOf(answer: OK<"getExchangeRates">): number {
  const rate: number = answer.data[0].exchange_rate;
  // @ts-expect-error an exchange rate is a number, not a string
  const asString: string = answer.data[0].exchange_rate;
  void asString;
  return rate;
}
export function totalOf(answer: OK<"listUsers">): number {
  // @ts-expect-error totalRecords is a number
  const s: string = answer.totalRecords;
  void s;
  return answer.totalRecords;
}

// The error envelope and the 422 detail.
export function messageOf(refusal: Schemas["ErrorEnvelope"]): string {
  const data: null = refusal.data;
  void data;
  // @ts-expect-error success is a boolean
  const n: number = refusal.success;
  void n;
  return refusal.message;
}
export function firstFailure(invalid: Schemas["ValidationBody"]): string {
  const loc: (string | number)[] = invalid.detail[0].loc;
  void loc;
  // @ts-expect-error a location holds names and indexes, not booleans
  const flags: boolean[] = invalid.detail[0].loc;
  void flags;
  // @ts-expect-error msg is a string
  const m: number = invalid.detail[0].msg;
  void m;
  return invalid.detail[0].msg;
}
