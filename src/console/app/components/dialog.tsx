/**
 * Modal dialogs on the native <dialog>: showModal() makes the rest of the page inert (focus stays
 * inside) and Escape closes; focus goes back to what had it before. ConfirmDialog asks before a
 * destructive action.
 */
import type { ComponentChildren, JSX } from "preact";
import { useEffect, useRef } from "preact/hooks";

export function Dialog(props: { title: string; onClose(): void; children: ComponentChildren }): JSX.Element {
  const ref = useRef<HTMLDialogElement>(null);
  const mounted = useRef(true);
  useEffect(() => {
    const opener = document.activeElement as HTMLElement | null;
    const dialog = ref.current;
    dialog?.showModal();
    // Closed before focus moves back: while it is modal the page behind is inert and refuses focus.
    return () => {
      mounted.current = false;
      dialog?.close();
      opener?.focus();
    };
  }, []);
  // Escape closes the native dialog (Chromium lets a page cancel that only after a user gesture), so
  // the view follows the dialog's own close rather than trying to hold it open.
  const onNativeClose = () => {
    if (mounted.current) props.onClose();
  };
  return (
    <dialog ref={ref} class="dialog" aria-label={props.title} onClose={onNativeClose}>
      <h2>{props.title}</h2>
      {props.children}
    </dialog>
  );
}

export interface ConfirmProps {
  title: string;
  message: ComponentChildren;
  confirmLabel: string;
  onConfirm(): void;
  onCancel(): void;
}

export function ConfirmDialog(props: ConfirmProps): JSX.Element {
  return (
    <Dialog title={props.title} onClose={props.onCancel}>
      <div>{props.message}</div>
      <div class="actions">
        <button type="button" class="secondary" autoFocus onClick={props.onCancel}>Cancel</button>
        <button type="button" class="danger" onClick={props.onConfirm}>{props.confirmLabel}</button>
      </div>
    </Dialog>
  );
}
