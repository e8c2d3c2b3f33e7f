/** العربية (المملكة العربية السعودية): written right to left. */
import { type Forms, type Messages, plural, type Unit } from "./types.js"

// Arabic counts: 1 and 2 have their own words; 3–10 take the plural, 11–99 the singular accusative
const units: Record<Unit, Forms & { readonly dual: string }> = {
  day: { one: "يوم واحد", two: "يومان", dual: "يومين", few: "أيام", many: "يومًا", other: "يوم" },
  week: { one: "أسبوع واحد", two: "أسبوعان", dual: "أسبوعين", few: "أسابيع", many: "أسبوعًا", other: "أسبوع" },
  month: { one: "شهر واحد", two: "شهران", dual: "شهرين", few: "أشهر", many: "شهرًا", other: "شهر" },
  quarter: {
    one: "ربع سنة واحد",
    two: "ربعا سنة",
    dual: "ربعي سنة",
    few: "أرباع سنة",
    many: "ربع سنة",
    other: "ربع سنة"
  },
  year: { one: "سنة واحدة", two: "سنتان", dual: "سنتين", few: "سنوات", many: "سنة", other: "سنة" }
}

const each: Record<Unit, string> = {
  day: "يوميًا",
  week: "أسبوعيًا",
  month: "شهريًا",
  quarter: "كل ربع سنة",
  year: "سنويًا"
}

const count = (n: number) => new Intl.NumberFormat("ar-SA").format(n)

export const messages: Messages = {
  dir: "rtl",
  every: (u, n) =>
    n === 1 ? each[u] : n === 2 ? `كل ${units[u].dual}` : `كل ${count(n)} ${plural("ar-SA", n, units[u])}`,
  duration: (u, n) => (n <= 2 ? plural("ar-SA", n, units[u]) : `${count(n)} ${plural("ar-SA", n, units[u])}`),
  onDay: (day) => `في اليوم ${new Intl.NumberFormat("ar-SA").format(day)} من كل شهر`,
  from: (every, date) => `${every} اعتبارًا من ${date}`,
  card: {
    cardNumber: "رقم البطاقة",
    month: "الشهر",
    year: "السنة",
    cvc: "رمز التحقق (CVC)",
    nameOnCard: "الاسم على البطاقة"
  },
  common: {
    tooManyWait: (s) => `محاولات دفع كثيرة جدًا. يُرجى المحاولة مرة أخرى بعد ${count(s)} ثانية.`,
    paymentFailed: "تعذّر إتمام الدفع.",
    authNotCompleted: "لم تكتمل مصادقة 3-D Secure.",
    authFailed: "فشلت مصادقة 3-D Secure.",
    unavailable: "الدفع غير متاح مؤقتًا. لم يُخصم أي مبلغ؛ يُرجى المحاولة مرة أخرى بعد بضع دقائق."
  },
  checkout: {
    checkout: "الدفع",
    soldBy: "البائع:",
    payment: "الدفع",
    quantity: "الكمية",
    decrease: "تقليل الكمية",
    increase: "زيادة الكمية",
    dueToday: "المستحق اليوم",
    thenLabel: "ثم",
    billed: "الفوترة",
    trial: "الفترة التجريبية",
    email: "البريد الإلكتروني",
    pay: "ادفع",
    cancel: "إلغاء والعودة إلى",
    agree: "بالدفع، أنت توافق على مستندات البائع التالية:",
    terms: "شروط الخدمة",
    privacy: "سياسة الخصوصية",
    and: "و",
    paid: "تم دفع عملية الشراء هذه بالفعل.",
    expired: "انتهت صلاحية جلسة الدفع هذه.",
    notFound: "جلسة الدفع هذه غير موجودة.",
    complete: "تم الدفع بنجاح",
    closePage: "يمكنك إغلاق هذه الصفحة.",
    confirming: "نحن نؤكد عملية الدفع. سيتم تحديث هذه الصفحة تلقائيًا؛ يُرجى عدم الدفع مرة أخرى.",
    processing: "جارٍ معالجة الدفع.",
    processingDetail: "سنؤكده لك قريبًا.",
    tooMany: "محاولات كثيرة جدًا",
    discountCode: "رمز الخصم",
    apply: "تطبيق",
    discountApplied: "تم تطبيق الخصم",
    includesTax: "شامل الضريبة"
  },
  invoice: {
    invoice: "فاتورة",
    creditNote: "إشعار دائن",
    number: "الرقم",
    issued: "تاريخ الإصدار",
    paidAt: "تاريخ الدفع",
    carried: "مُرحَّل إلى فاتورتك التالية",
    status: "الحالة",
    from: "من",
    billTo: "فاتورة إلى",
    description: "الوصف",
    period: "الفترة",
    quantity: "الكمية",
    amount: "المبلغ",
    subtotal: "المجموع الفرعي",
    appliedBalance: "الرصيد المستخدم",
    discount: "الخصم",
    tax: "الضريبة",
    included: "مشمولة",
    total: "الإجمالي",
    amountDue: "المبلغ المستحق",
    refunded: "مسترد",
    pay: "ادفع",
    download: "تنزيل PDF",
    notFound: "هذه الفاتورة غير موجودة.",
    statuses: {
      open: "مفتوحة",
      pending: "قيد المعالجة",
      retrying: "فشل الدفع — مستحقة",
      success: "مدفوعة",
      failed: "فاشلة",
      refunded: "مستردة",
      partially_refunded: "مستردة جزئيًا",
      void: "ملغاة"
    }
  },
  portal: {
    title: "الفوترة الخاصة بك",
    subscriptions: "الاشتراكات",
    invoices: "الفواتير",
    noSubscriptions: "لا توجد اشتراكات.",
    noInvoices: "لا توجد فواتير.",
    statuses: {
      init: "قيد البدء",
      trial: "فترة تجريبية",
      active: "نشط",
      canceled: "ملغى",
      incomplete: "غير مكتمل",
      paused: "متوقف مؤقتًا",
      past_due: "متأخر السداد — فشل الدفع",
      unpaid: "غير مدفوع — حدّث بطاقتك للمتابعة"
    },
    nextInvoice: (d, a) => `الفاتورة التالية في ${d}: ${a}`,
    paidWith: (card) => `الدفع باستخدام ${card}`,
    card: (brand, last4, m, y) => `${brand} •••• ${last4}، تنتهي في ${m}/${y}`,
    checkoutCard: "البطاقة المستخدمة عند الدفع",
    updateCard: "تحديث طريقة الدفع",
    saveCard: "حفظ البطاقة",
    endsOn: (d) => `ينتهي في ${d}.`,
    keep: "الاحتفاظ باشتراكي",
    cancel: "الإلغاء في نهاية الفترة",
    changePlan: "تغيير الخطة",
    newPlan: "الخطة الجديدة",
    review: "مراجعة التغيير",
    switchTitle: (from, to) => `التغيير من ${from} إلى ${to}`,
    unusedTime: (name) => `الوقت غير المستخدم من ${name}`,
    remainingTime: (name) => `الوقت المتبقي من ${name}`,
    discountEnds: (code) => `الخصم ${code} لا ينطبق على هذه الخطة: ينتهي مع هذا التغيير`,
    tax: "الضريبة",
    dueNow: "المستحق الآن",
    refunded: "مسترد إلى بطاقتك",
    credited: "مضاف إلى رصيدك",
    nothingNow: "لن يتم تحصيل أي مبلغ الآن؛ ستشمل فاتورتك التالية الخطة الجديدة.",
    confirm: "تأكيد التغيير",
    back: "رجوع",
    backTo: (m) => `العودة إلى ${m}`,
    columns: ["الرقم", "التاريخ", "الحالة", "المبلغ"],
    view: "عرض",
    expired: "انتهت صلاحية هذا الرابط أو أنه غير موجود.",
    expiredHint: "اطلب رابطًا جديدًا من المكان الذي أتيت منه.",
    noSuchSubscription: "هذا الاشتراك غير موجود.",
    notAvailable: "هذا الإجراء غير متاح.",
    quoteMoved: "تغيّر شيء ما منذ عرض هذا المبلغ؛ هذا هو المبلغ الحالي."
  }
}
