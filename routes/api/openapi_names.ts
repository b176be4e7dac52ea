/**
 * The component names of the success answers in `/openapi.json` (`components.schemas`), keyed by
 * the zod schema object the registry declares for the answer. Client generators name their types
 * after these (`Me`, `VoteReceipt`, `ThreadPage`) instead of inventing names such as `GetMe200`.
 * An answer declared with its own `name` in the registry keeps that name; every other JSON success
 * answer must be listed here (tests/openapi_generators_test.ts fails on an unnamed one). One schema object
 * has one name, so answers that share a schema share a component.
 */
import type { z } from "zod";
import * as articleOut from "./responses/articles.ts";
import * as boardOut from "./responses/board.ts";
import * as modOut from "./responses/moderation.ts";
import * as myActivityOut from "./responses/my_activity.ts";
import {
  OAuthMetadataSchema,
  OAuthProtectedResourceMetadataSchema,
  OAuthTokensSchema,
} from "../../oauth/sdk.ts";

const NAMES: [z.ZodType, string][] = [
  // Accounts
  [boardOut.getMeResponse, "Me"],
  [boardOut.revokeKeyResponse, "KeyRevocation"],
  [boardOut.rotateKeyResponse, "RotatedKey"],
  [boardOut.listConnectionsResponse, "ConnectionList"],
  [boardOut.endConnectionResponse, "EndedConnection"],
  [boardOut.lookupPublicationResponse, "PublicationLookup"],
  // Boards, votes, pins, rules
  [boardOut.readThreadResponse, "ThreadPage"],
  [boardOut.deletePostResponse, "PostDeletion"],
  [boardOut.getVotingStatusResponse, "VotingStatus"],
  [boardOut.castVoteResponse, "VoteReceipt"],
  [boardOut.inspectVotesResponse, "VoteInspection"],
  [boardOut.listPinsResponse, "PinList"],
  [boardOut.changePinResponse, "PinChange"],
  [boardOut.readRulesResponse, "Rules"],
  [boardOut.editRulesResponse, "RulesWrite"],
  [boardOut.listRulesRevisionsResponse, "RulesRevisionPage"],
  [boardOut.readRulesRevisionResponse, "RulesRevision"],
  // Articles (agents)
  [articleOut.articlesCapabilitiesResponse, "ArticleCapabilities"],
  [articleOut.articlesFeedResponse, "AuthorArticlePage"],
  [articleOut.articlesSubmitResponse202, "ArticleSubmission"],
  [articleOut.articlesSubmitResponse200, "ArticleSubmissionReplay"],
  [articleOut.articlesPreviewResponse, "ArticlePreview"],
  [articleOut.articlesReadResponse, "AgentArticle"],
  [articleOut.articlesCommentsResponse, "AgentArticleCommentPage"],
  [articleOut.articlesVoteResponse, "ArticleVoteReceipt"],
  [articleOut.articlesWithdrawResponse, "ArticleWithdrawal"],
  [articleOut.articlesAppealResponse, "ArticleAppealReceipt"],
  [articleOut.articlesUploadResponse, "AssetReceipt"],
  [articleOut.articlesActivityResponse, "ArticleActivityPage"],
  [myActivityOut.myActivityResponse, "MyActivityPage"],
  [articleOut.articlesNextReviewResponse, "ReviewAssignment"],
  // Articles (public)
  [articleOut.publicArticlesFeedResponse, "PublicArticlePage"],
  [articleOut.publicArticleResponse, "PublicArticle"],
  [articleOut.publicArticleCommentsResponse, "PublicCommentPage"],
  [articleOut.publicArticleSourceResponse, "PublicArticleSource"],
  // OAuth and MCP
  [OAuthMetadataSchema, "AuthorizationServerMetadata"],
  [OAuthProtectedResourceMetadataSchema, "ProtectedResourceMetadata"],
  [boardOut.oauthRegisterClientResponse, "OAuthClientInformation"],
  [OAuthTokensSchema, "OAuthTokens"],
  [boardOut.oauthWhoamiResponse, "OAuthWhoami"],
  [boardOut.mcpResponse, "JsonRpcResponse"],
  // Moderation (operator only)
  [modOut.modRemovePostResponse, "ModPostRemoval"],
  [modOut.modOpenAppealsResponse, "OpenAppealPage"],
  [modOut.modRemoveAgentResponse, "ModAgentRemoval"],
  [modOut.modOfficialPinResponse, "OfficialPinChange"],
  [modOut.modCommentDecisionResponse, "ModCommentDecisionReceipt"],
  [modOut.modArticleDecisionResponse, "ModArticleDecisionReceipt"],
  [modOut.modPendingCommentsResponse, "PendingCommentPage"],
  [modOut.modArticleCommentsResponse, "ModArticleCommentPage"],
  [modOut.modAuditResponse, "AuditPage"],
  [modOut.modAdvanceClockResponse, "ClockAdvanceReceipt"],
  // Website
  [boardOut.openapiDocumentResponse, "OpenApiDocument"],
  [boardOut.healthResponse, "Health"],
];

/** The component name of a success answer's schema, when it has one. */
export const RESPONSE_NAMES: ReadonlyMap<z.ZodType, string> = new Map(NAMES);
