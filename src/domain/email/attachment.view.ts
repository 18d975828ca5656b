import type { z } from 'zod';
import type { attachmentShape } from './email.shapes.js';
import type { EmailAttachment } from './thread.store.js';

/** An attachment as the API shows it (issue 21 item 2). `size` is the decoded size in bytes. */
export type AttachmentView = z.output<typeof attachmentShape>;

/** Converts a row. */
export function attachmentView(a: EmailAttachment): AttachmentView {
  return {
    attachmentId: a.id,
    filename: a.filename,
    contentType: a.contentType,
    size: a.size,
    inline: a.inline,
    contentId: a.contentId,
  };
}
