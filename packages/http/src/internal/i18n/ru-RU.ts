/** Русский (Россия). */
import { type Forms, type Messages, plural, type Unit } from "./types.js"

const units: Record<Unit, Forms> = {
  day: { one: "день", few: "дня", many: "дней", other: "дня" },
  week: { one: "неделю", few: "недели", many: "недель", other: "недели" },
  month: { one: "месяц", few: "месяца", many: "месяцев", other: "месяца" },
  quarter: { one: "квартал", few: "квартала", many: "кварталов", other: "квартала" },
  year: { one: "год", few: "года", many: "лет", other: "года" }
}

const durations: Record<Unit, Forms> = {
  ...units,
  week: { one: "неделя", few: "недели", many: "недель", other: "недели" }
}

const each: Record<Unit, string> = {
  day: "ежедневно",
  week: "еженедельно",
  month: "ежемесячно",
  quarter: "ежеквартально",
  year: "ежегодно"
}

export const messages: Messages = {
  dir: "ltr",
  every: (u, n) => (n === 1 ? each[u] : `раз в ${n} ${plural("ru-RU", n, units[u])}`),
  duration: (u, n) => `${n} ${plural("ru-RU", n, durations[u])}`,
  onDay: (day) => `${day}-го числа каждого месяца`,
  from: (every, date) => `${every} с ${date}`,
  card: {
    cardNumber: "Номер карты",
    month: "Месяц",
    year: "Год",
    cvc: "CVC",
    nameOnCard: "Имя на карте"
  },
  common: {
    tooManyWait: (s) => `Слишком много попыток оплаты. Повторите через ${s} с.`,
    paymentFailed: "Не удалось провести платеж.",
    authNotCompleted: "Проверка 3-D Secure не была завершена.",
    authFailed: "Проверка 3-D Secure не пройдена.",
    unavailable: "Платежи временно недоступны. Деньги не списаны; повторите попытку через несколько минут."
  },
  checkout: {
    checkout: "Оформление заказа",
    soldBy: "Продавец:",
    payment: "Оплата",
    quantity: "Количество",
    decrease: "Уменьшить количество",
    increase: "Увеличить количество",
    dueToday: "К оплате сегодня",
    thenLabel: "Далее",
    billed: "Списание",
    trial: "Пробный период",
    email: "Эл. почта",
    pay: "Оплатить",
    cancel: "Отменить и вернуться в",
    agree: "Оплачивая, вы принимаете следующие документы продавца:",
    terms: "Условия использования",
    privacy: "Политика конфиденциальности",
    and: "и",
    paid: "Этот заказ уже оплачен.",
    expired: "Срок действия этой сессии оплаты истек.",
    notFound: "Такой сессии оплаты не существует.",
    complete: "Оплата выполнена",
    closePage: "Эту страницу можно закрыть.",
    confirming: "Мы подтверждаем ваш платеж. Страница обновится автоматически; не оплачивайте повторно.",
    processing: "Ваш платеж обрабатывается.",
    processingDetail: "Мы скоро его подтвердим.",
    tooMany: "Слишком много попыток",
    discountCode: "Промокод",
    apply: "Применить",
    discountApplied: "Скидка применена",
    includesTax: "Включая налог"
  },
  invoice: {
    invoice: "Счет",
    creditNote: "Кредит-нота",
    number: "Номер",
    issued: "Дата выставления",
    paidAt: "Дата оплаты",
    carried: "Перенесено в следующий счет",
    status: "Статус",
    from: "От",
    billTo: "Плательщик",
    description: "Описание",
    period: "Период",
    quantity: "Кол-во",
    amount: "Сумма",
    subtotal: "Промежуточный итог",
    appliedBalance: "Зачтённый баланс",
    discount: "Скидка",
    tax: "Налог",
    included: "включен",
    total: "Итого",
    amountDue: "Сумма к оплате",
    refunded: "Возвращено",
    pay: "Оплатить",
    download: "Скачать PDF",
    notFound: "Такого счета не существует.",
    statuses: {
      open: "Открыт",
      pending: "Обрабатывается",
      retrying: "Платеж не прошел — к оплате",
      success: "Оплачен",
      failed: "Не оплачен",
      refunded: "Возвращен",
      partially_refunded: "Частично возвращен",
      void: "Аннулирован"
    }
  },
  portal: {
    title: "Ваши платежи",
    subscriptions: "Подписки",
    invoices: "Счета",
    noSubscriptions: "Нет подписок.",
    noInvoices: "Нет счетов.",
    statuses: {
      init: "Запускается",
      trial: "Пробный период",
      active: "Активна",
      canceled: "Отменена",
      incomplete: "Не завершена",
      paused: "Приостановлена",
      past_due: "Просрочена — платеж не прошел",
      unpaid: "Не оплачена — обновите карту, чтобы продолжить"
    },
    nextInvoice: (d, a) => `следующий счет ${d}: ${a}`,
    paidWith: (card) => `Оплата картой: ${card}`,
    card: (brand, last4, m, y) => `${brand} •••• ${last4}, действует до ${m}/${y}`,
    checkoutCard: "карта, использованная при оформлении",
    updateCard: "Изменить способ оплаты",
    saveCard: "Сохранить карту",
    endsOn: (d) => `Заканчивается ${d}.`,
    keep: "Сохранить подписку",
    cancel: "Отменить в конце периода",
    changePlan: "Сменить тариф",
    newPlan: "Новый тариф",
    review: "Проверить изменение",
    switchTitle: (from, to) => `Переход с «${from}» на «${to}»`,
    unusedTime: (name) => `Неиспользованное время: ${name}`,
    remainingTime: (name) => `Оставшееся время: ${name}`,
    discountEnds: (code) => `Скидка ${code} не действует для этого тарифа: она прекращается при переходе`,
    tax: "Налог",
    dueNow: "К оплате сейчас",
    refunded: "Возвращено на вашу карту",
    credited: "Зачислено на ваш баланс",
    nothingNow: "Сейчас ничего не списывается; следующий счет будет выставлен по новому тарифу.",
    confirm: "Подтвердить изменение",
    back: "Назад",
    backTo: (m) => `Вернуться в ${m}`,
    columns: ["Номер", "Дата", "Статус", "Сумма"],
    view: "Открыть",
    expired: "Срок действия ссылки истек, или она не существует.",
    expiredHint: "Запросите новую там, откуда вы пришли.",
    noSuchSubscription: "Такой подписки не существует.",
    notAvailable: "Это действие недоступно.",
    quoteMoved: "С момента показа этой суммы что-то изменилось; вот актуальная сумма."
  }
}
