import { Type } from "typebox";
import { FEEDBACK_CATEGORIES } from "../../activity/feedback-row.js";

/** POST /generation/feedback (docs/content-logging.md "Feedback"). */
export const GenerationFeedbackBody = Type.Object({
  generation_id: Type.String({ minLength: 1, maxLength: 256, description: "The generation's id" }),
  category: Type.Enum([...FEEDBACK_CATEGORIES], { description: "What the feedback is about" }),
  comment: Type.Optional(Type.String({ maxLength: 1000, description: "Free text" })),
});

export const GenerationFeedbackResponse = Type.Object({
  data: Type.Object({ success: Type.Literal(true) }),
});
