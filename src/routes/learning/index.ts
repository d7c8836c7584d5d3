import { createRouter } from '../../http/router.js';
import * as handlers from './learning.handlers.js';
import * as routes from './learning.routes.js';

/** The learner's routes beyond the spec (docs/learning.md). Mounted inside the /user router, whose Cache-Control they share. */
export function learningRouter() {
  const router = createRouter();
  router.openapi(routes.listNextSparks, handlers.listNextSparks);
  router.openapi(routes.listDueReviews, handlers.listDueReviews);
  router.openapi(routes.recordReview, handlers.recordReview);
  router.openapi(routes.voidLearningEvent, handlers.voidLearningEvent);
  router.openapi(routes.listStatements, handlers.listStatements);
  return router;
}
